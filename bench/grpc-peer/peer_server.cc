// A gRPC C++ server of the CoinWatch proto, the peer scripts/bench-peers measures coinwatchd's gRPC transport
// against: settings from an in-memory map (GetSettings/SaveSettings), prices fanned out from PublishPrices to
// every StreamPrices subscriber. Written the way a gRPC C++ service usually is (the synchronous API, a thread
// per stream), with the same bounded, conflating queue per subscriber coinwatchd keeps.
//
// Usage: peer_server --port PORT [--devices N]   (devices bench-0 … bench-N-1 exist from the start)
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include <grpcpp/grpcpp.h>

#include "coinwatch/v1/coinwatch.grpc.pb.h"

using namespace coinwatch::v1;

namespace {

// One StreamPrices call: updates waiting to be written, at most one per symbol once it falls behind.
struct Subscriber {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<PriceUpdate> queue;
    std::set<std::string> symbols;
    bool all = false;
    uint64_t sequence = 0;

    void push(const Tick& tick) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!all && symbols.count(tick.symbol()) == 0) return;
        if (queue.size() >= 1024) {
            for (auto& pending : queue) {
                if (pending.symbol() == tick.symbol()) {
                    *pending.mutable_price() = tick.price();
                    pending.set_source_time_ms(tick.time_ms());
                    return;
                }
            }
        }
        PriceUpdate update;
        update.set_symbol(tick.symbol());
        *update.mutable_price() = tick.price();
        update.set_source_time_ms(tick.time_ms());
        queue.push_back(std::move(update));
        ready.notify_one();
    }
};

class Peer final : public CoinWatch::Service {
public:
    explicit Peer(int devices) {
        for (int index = 0; index < devices; ++index) {
            Settings settings;
            settings.set_device_id("bench-" + std::to_string(index));
            settings.set_version(1);
            AlertRule rule;
            rule.mutable_below()->set_mantissa(50000);
            rule.mutable_above()->set_mantissa(90000);
            (*settings.mutable_rules())["BTC"] = rule;
            settings_[settings.device_id()] = settings;
        }
    }

    grpc::Status GetSettings(grpc::ServerContext*, const GetSettingsRequest* request, GetSettingsResponse* response) override {
        std::shared_lock<std::shared_mutex> lock(settingsMutex_);
        auto found = settings_.find(request->device_id());
        if (found == settings_.end()) {
            return grpc::Status(grpc::StatusCode::NOT_FOUND, "no settings for device '" + request->device_id() + "'");
        }
        *response->mutable_settings() = found->second;
        return grpc::Status::OK;
    }

    grpc::Status SaveSettings(grpc::ServerContext*, const SaveSettingsRequest* request, SaveSettingsResponse* response) override {
        std::unique_lock<std::shared_mutex> lock(settingsMutex_);
        Settings& settings = settings_[request->device_id()];
        settings.set_device_id(request->device_id());
        settings.set_version(settings.version() + 1);
        for (const auto& entry : request->set_rules()) (*settings.mutable_rules())[entry.first] = entry.second;
        *response->mutable_settings() = settings;
        return grpc::Status::OK;
    }

    grpc::Status PublishPrices(grpc::ServerContext*, const PublishPricesRequest* request, PublishPricesResponse* response) override {
        std::lock_guard<std::mutex> lock(subscribersMutex_);
        for (const auto& tick : request->ticks()) {
            for (auto* subscriber : subscribers_) subscriber->push(tick);
        }
        response->set_accepted(request->ticks_size());
        return grpc::Status::OK;
    }

    grpc::Status StreamPrices(grpc::ServerContext* context, const StreamPricesRequest* request,
                              grpc::ServerWriter<PriceUpdate>* writer) override {
        Subscriber subscriber;
        subscriber.all = request->symbols_size() == 0;
        for (const auto& symbol : request->symbols()) subscriber.symbols.insert(symbol);
        {
            std::lock_guard<std::mutex> lock(subscribersMutex_);
            subscribers_.insert(&subscriber);
        }
        while (!context->IsCancelled()) {
            std::deque<PriceUpdate> batch;
            {
                std::unique_lock<std::mutex> lock(subscriber.mutex);
                subscriber.ready.wait_for(lock, std::chrono::milliseconds(100), [&] { return !subscriber.queue.empty(); });
                batch.swap(subscriber.queue);
            }
            bool ok = true;
            for (auto& update : batch) {
                update.set_sequence(++subscriber.sequence);
                if (!writer->Write(update)) { ok = false; break; }
            }
            if (!ok) break;
        }
        std::lock_guard<std::mutex> lock(subscribersMutex_);
        subscribers_.erase(&subscriber);
        return grpc::Status::OK;
    }

private:
    std::shared_mutex settingsMutex_;
    std::unordered_map<std::string, Settings> settings_;
    std::mutex subscribersMutex_;
    std::set<Subscriber*> subscribers_;
};

}  // namespace

int main(int argc, char** argv) {
    int port = 0;
    int devices = 1000;
    for (int index = 1; index + 1 < argc; index += 2) {
        if (std::strcmp(argv[index], "--port") == 0) port = std::atoi(argv[index + 1]);
        if (std::strcmp(argv[index], "--devices") == 0) devices = std::atoi(argv[index + 1]);
    }
    Peer peer(devices);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials());
    builder.RegisterService(&peer);
    auto server = builder.BuildAndStart();
    if (!server) {
        std::cerr << "peer_server: cannot listen on port " << port << std::endl;
        return 1;
    }
    std::cout << "peer_server listening on 127.0.0.1:" << port << std::endl;
    server->Wait();
    return 0;
}
