import CoinWatchModel
import CoinWatchProto

/// Alert rules written as decimal text.
enum V1AlertRuleFixture {
    static func rule(below: String?, above: String?) -> V1.AlertRule {
        V1.AlertRule(
            below: below.map { V1.Decimal(ExactDecimal($0)!) }, above: above.map { V1.Decimal(ExactDecimal($0)!) })
    }
}
