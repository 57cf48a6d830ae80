#ifndef CCOINWATCHPROTO_H
#define CCOINWATCHPROTO_H
#include "coinwatch/v1/rpc.pb-c.h"
#include "coinwatch/v1/coinwatch.pb-c.h"
#endif
