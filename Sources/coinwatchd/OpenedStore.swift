import CoinWatchService
import CoinWatchStore

/// A store as coinwatchd and its offline commands use it: the database, brought up to date by its settings journal
/// before anything reads or writes it (`SettingsStore.openJournal` says why that order matters).
struct OpenedStore {
    let database: Database
    let journal: WriteAheadJournal

    /// Opens the journal of `database`, replaying into it what the database may lack; closes `database` when that
    /// fails.
    init(_ database: Database) throws(StoreError) {
        do throws(StoreError) {
            journal = try SettingsStore.openJournal(database)
        } catch {
            database.close()
            throw error
        }
        self.database = database
    }

    /// Closes the journal (checkpointing it) and then the database, once nothing writes to either.
    func close() {
        journal.close()
        database.close()
    }
}
