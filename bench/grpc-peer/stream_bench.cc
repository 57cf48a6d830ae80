// StreamPrices fan-out over gRPC, the same load against coinwatchd and the C++ peer: N subscribers (one HTTP/2
// connection each) stream every symbol while one publisher keeps 64 ticks in flight as coinwatch-bench's native
// publisher does (4 PublishPrices calls of 16 ticks, cycling through the symbols), as fast as the server
// answers. Prints deliveries per second across subscribers.
//
// Usage: stream_bench --target HOST:PORT [--subscribers 100] [--symbols 10] [--duration 5] [--token TOKEN]
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "coinwatch/v1/coinwatch.grpc.pb.h"

using namespace coinwatch::v1;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
    std::string target = "127.0.0.1:7878";
    std::string token;
    int subscribers = 100;
    int symbols = 10;
    double duration = 5;
    for (int index = 1; index + 1 < argc; index += 2) {
        std::string name = argv[index];
        std::string value = argv[index + 1];
        if (name == "--target") target = value;
        else if (name == "--subscribers") subscribers = std::atoi(value.c_str());
        else if (name == "--symbols") symbols = std::atoi(value.c_str());
        else if (name == "--duration") duration = std::atof(value.c_str());
        else if (name == "--token") token = value;
    }
    std::atomic<bool> measuring{false};
    std::atomic<bool> stopping{false};
    std::atomic<uint64_t> delivered{0};
    std::atomic<int> streaming{0};
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<std::thread> readers;
    for (int index = 0; index < subscribers; ++index) {
        // A channel argument that differs per subscriber keeps each on its own connection.
        grpc::ChannelArguments arguments;
        arguments.SetInt("coinwatch.bench.subscriber", index);
        auto channel = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), arguments);
        contexts.push_back(std::make_unique<grpc::ClientContext>());
        grpc::ClientContext* context = contexts.back().get();
        readers.emplace_back([channel, context, symbols, &measuring, &stopping, &delivered, &streaming] {
            auto stub = CoinWatch::NewStub(channel);
            StreamPricesRequest request;
            for (int symbol = 0; symbol < symbols; ++symbol) request.add_symbols("BN" + std::to_string(symbol));
            auto reader = stub->StreamPrices(context, request);
            streaming.fetch_add(1);
            PriceUpdate update;
            uint64_t local = 0;
            while (reader->Read(&update)) {
                if (measuring.load(std::memory_order_relaxed)) ++local;
                if (local >= 1024) { delivered.fetch_add(local); local = 0; }
            }
            delivered.fetch_add(local);
            reader->Finish();
        });
    }
    while (streaming.load() < subscribers) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    // One connection, four calls in flight (one per thread), 16 ticks each.
    auto publisher = CoinWatch::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
    std::atomic<uint64_t> publishedCount{0};
    std::atomic<int64_t> price{100000};
    auto publishOnce = [&](int& next) {
        PublishPricesRequest request;
        for (int index = 0; index < 16; ++index) {
            Tick* tick = request.add_ticks();
            tick->set_symbol("BN" + std::to_string(next));
            next = (next + 1) % symbols;
            tick->mutable_price()->set_mantissa(price.fetch_add(1));
            tick->mutable_price()->set_scale(2);
        }
        grpc::ClientContext context;
        if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
        PublishPricesResponse response;
        grpc::Status status = publisher->PublishPrices(&context, request, &response);
        if (!status.ok()) {
            std::cerr << "publish failed: " << status.error_message() << std::endl;
            std::exit(1);
        }
    };
    auto warmupEnd = Clock::now() + std::chrono::seconds(1);
    auto start = warmupEnd;
    auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
    std::vector<std::thread> publishers;
    for (int thread = 0; thread < 4; ++thread) {
        publishers.emplace_back([&, thread] {
            int next = thread * 4 % symbols;
            while (Clock::now() < end) {
                publishOnce(next);
                if (measuring.load(std::memory_order_relaxed)) publishedCount.fetch_add(16);
            }
        });
    }
    std::this_thread::sleep_until(warmupEnd);
    measuring.store(true);
    std::this_thread::sleep_until(end);
    measuring.store(false);
    for (auto& thread : publishers) thread.join();
    uint64_t published = publishedCount.load();
    double elapsed = std::chrono::duration<double>(end - start).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (auto& context : contexts) context->TryCancel();
    for (auto& reader : readers) reader.join();
    double rate = delivered.load() / elapsed;
    std::cout << "{\"mode\":\"grpc-stream\",\"subscribers\":" << subscribers << ",\"published_ticks\":" << published
              << ",\"deliveries\":" << delivered.load() << ",\"deliveries_per_second\":" << static_cast<uint64_t>(rate)
              << "}" << std::endl;
    return 0;
}
