// CNATS: the NATS C client, nats.c 3.4 (Debian's libnats-dev), for Swift: core NATS, JetStream and KV.
// Only Sources/CoinWatchCluster/NATS/NATSConnection.swift and JetStream.swift import this module.
#ifndef CNATS_SHIM_H
#define CNATS_SHIM_H
#include <nats/nats.h>
#endif
