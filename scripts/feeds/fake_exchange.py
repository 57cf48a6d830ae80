#!/usr/bin/env python3
"""A local fake of one exchange's WebSocket market data, for the feed tests and benchmarks.

Speaks one venue's format (finnhub, binance, coinbase, kraken) over ws:// or, with --cert/--key, wss://. Never
touches the internet: it listens on 127.0.0.1 and sends only what it is told.

Usage: fake_exchange.py --venue binance [--port 0] [--cert FILE --key FILE] [--heartbeat SECONDS]
                        [--reject STATUS] [--bad-accept]

It prints `listening PORT` on stdout once it accepts connections, then one JSON object per line for what clients
do: {"event": "connected", "path": …}, {"event": "message", "text": …} (the subscribe messages),
{"event": "closed", "code": …}. Commands arrive on stdin, one JSON object per line, and go to every open
connection (the newest first when it matters):

  {"cmd": "trade", "symbol": "BTC", "price": "64250.5"}     a trade in the venue's format (consecutive ids)
  {"cmd": "trades", "symbol": "BTC", "prices": ["1", …]}    several, one message each, written together
  {"cmd": "gap", "symbol": "BTC", "skip": 3}                 the next trade id jumps by skip + 1
  {"cmd": "duplicate", "symbol": "BTC"}                      the last trade again, same id
  {"cmd": "raw", "text": "…"}                                a text message as given (malformed JSON, …)
  {"cmd": "binary"}                                          a binary frame
  {"cmd": "oversize", "bytes": N}                            a text frame of N bytes
  {"cmd": "huge", "bytes": N}                                one text frame of N bytes, streamed (RSS tests)
  {"cmd": "endless"}                                         continuation frames until the client leaves
  {"cmd": "bad-close"}                                       a close frame with the reserved code 1005
  {"cmd": "drop"}                                            close the TCP connection without a close frame
  {"cmd": "silence"}                                         stop heartbeats and stop reading (no pongs)
  {"cmd": "resume"}                                          heartbeats and reading again
  {"cmd": "flood", "symbol": "BTC", "count": N, "rate": R}   N trades at R per second, each price carrying its send
                                                             time in µs; rate 0: as fast as possible
  {"cmd": "quit"}
"""
import argparse
import asyncio
import base64
import json
import ssl
import struct
import sys
import time

from websockets.asyncio.server import serve
from websockets.datastructures import Headers
from websockets.http11 import Response


def emit(**event):
    print(json.dumps(event, separators=(",", ":")), flush=True)


def frame(opcode, payload, fin=True):
    """An unmasked server frame."""
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + struct.pack(">H", n)
    else:
        head += bytes([127]) + struct.pack(">Q", n)
    return head + payload


class Venue:
    """Message formats per venue."""

    def __init__(self, name):
        self.name = name
        self.ids = {}
        self.sequence = 1000

    def instrument(self, symbol):
        return {
            "binance": f"{symbol}USDT",
            "coinbase": f"{symbol}-USD",
            "kraken": f"{symbol}/USD",
            "finnhub": f"BINANCE:{symbol}USDT",
        }[self.name]

    def next_id(self, symbol, skip=0):
        self.ids[symbol] = self.ids.get(symbol, 100) + 1 + skip
        return self.ids[symbol]

    def trade(self, symbol, price, trade_id=None):
        trade_id = self.next_id(symbol) if trade_id is None else trade_id
        now_ms = int(time.time() * 1000)
        iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now_ms / 1000)) + f".{now_ms % 1000:03d}000Z"
        inst = self.instrument(symbol)
        self.sequence += 7
        if self.name == "binance":
            data = {"e": "trade", "E": now_ms, "s": inst, "t": trade_id, "p": price, "q": "0.01", "T": now_ms,
                    "m": True, "M": True}
            return json.dumps({"stream": f"{inst.lower()}@trade", "data": data}, separators=(",", ":"))
        if self.name == "coinbase":
            return json.dumps({"type": "match", "trade_id": trade_id, "sequence": self.sequence, "maker_order_id": "m",
                               "taker_order_id": "t", "time": iso, "product_id": inst, "size": "0.01",
                               "price": price, "side": "buy"}, separators=(",", ":"))
        if self.name == "kraken":
            # Kraken v2 writes prices as JSON numbers; the text is kept exactly as given.
            return ('{"channel":"trade","type":"update","data":[{"symbol":"%s","side":"buy","price":%s,"qty":0.01,'
                    '"ord_type":"market","trade_id":%d,"timestamp":"%s"}]}' % (inst, price, trade_id, iso))
        return '{"type":"trade","data":[{"p":%s,"s":"%s","t":%d,"v":0.01}]}' % (price, inst, now_ms)

    def heartbeat(self, symbols):
        if self.name == "kraken":
            return ['{"channel":"heartbeat"}']
        if self.name == "coinbase":
            return [json.dumps({"type": "heartbeat", "sequence": self.sequence,
                                "last_trade_id": self.ids.get(s, 0), "product_id": self.instrument(s),
                                "time": "2024-06-10T00:00:00.000000Z"}) for s in symbols if s in self.ids] or []
        if self.name == "finnhub":
            return ['{"type":"ping"}']
        return []

    def ack(self, text):
        try:
            message = json.loads(text)
        except ValueError:
            return None
        if self.name == "binance" and message.get("method") == "SUBSCRIBE":
            return json.dumps({"result": None, "id": message.get("id")})
        if self.name == "coinbase" and message.get("type") == "subscribe":
            return json.dumps({"type": "subscriptions", "channels": message.get("channels", [])})
        if self.name == "kraken" and message.get("method") == "subscribe":
            return json.dumps({"method": "subscribe", "success": True, "result": message.get("params", {}),
                               "req_id": message.get("req_id")})
        return None


class Exchange:
    def __init__(self, args):
        self.args = args
        self.venue = Venue(args.venue)
        self.connections = []
        self.silent = False
        self.last_trade = {}

    async def handler(self, connection):
        self.connections.append(connection)
        emit(event="connected", path=connection.request.path, count=len(self.connections))
        beat = asyncio.create_task(self.heartbeats(connection))
        try:
            async for text in connection:
                if isinstance(text, bytes):
                    emit(event="binary", bytes=len(text))
                    continue
                emit(event="message", text=text)
                reply = self.venue.ack(text)
                if reply is not None:
                    await connection.send(reply)
        except Exception as error:  # noqa: BLE001 - any way the client leaves is reported
            emit(event="error", reason=type(error).__name__)
        finally:
            beat.cancel()
            if connection in self.connections:
                self.connections.remove(connection)
            received = getattr(connection.protocol, "close_rcvd", None)
            code = received.code if received else None
            emit(event="closed", code=code)

    async def heartbeats(self, connection):
        while self.args.heartbeat > 0:
            await asyncio.sleep(self.args.heartbeat)
            if self.silent:
                continue
            for message in self.venue.heartbeat(self.venue.ids.keys() or ["BTC"]):
                try:
                    await connection.send(message)
                except Exception:  # noqa: BLE001
                    return

    def process_request(self, connection, request):
        if self.args.reject:
            headers = Headers([("Retry-After", "1")]) if self.args.reject in (429, 503) else Headers()
            return Response(self.args.reject, "Rejected", headers, b"")
        return None

    def process_response(self, connection, request, response):
        if self.args.bad_accept:
            response.headers["Sec-WebSocket-Accept"] = base64.b64encode(b"not the right digest!").decode()
        return response

    def raw(self, data):
        for connection in list(self.connections):
            connection.transport.write(data)

    async def command(self, command):
        kind = command.get("cmd")
        if kind == "trade":
            symbol = command["symbol"]
            text = self.venue.trade(symbol, command["price"])
            self.last_trade[symbol] = (command["price"], self.venue.ids.get(symbol))
            self.raw(frame(1, text.encode()))
        elif kind == "trades":
            data = b"".join(frame(1, self.venue.trade(command["symbol"], p).encode()) for p in command["prices"])
            self.raw(data)
        elif kind == "gap":
            self.venue.next_id(command["symbol"], skip=command.get("skip", 1) - 1)
        elif kind == "duplicate":
            symbol = command["symbol"]
            price, trade_id = self.last_trade[symbol]
            self.raw(frame(1, self.venue.trade(symbol, price, trade_id=trade_id).encode()))
        elif kind == "raw":
            self.raw(frame(1, command["text"].encode()))
        elif kind == "binary":
            self.raw(frame(2, b"\x00\x01\x02"))
        elif kind == "oversize":
            self.raw(frame(1, b" " * command["bytes"]))
        elif kind == "huge":
            size = command["bytes"]
            for connection in list(self.connections):
                asyncio.create_task(self.stream_huge(connection, size))
        elif kind == "endless":
            for connection in list(self.connections):
                asyncio.create_task(self.stream_endless(connection))
        elif kind == "bad-close":
            self.raw(frame(8, struct.pack(">H", 1005)))
        elif kind == "drop":
            for connection in list(self.connections):
                connection.transport.abort()
        elif kind == "silence":
            self.silent = True
            for connection in list(self.connections):
                connection.transport.pause_reading()
        elif kind == "resume":
            self.silent = False
            for connection in list(self.connections):
                connection.transport.resume_reading()
        elif kind == "flood":
            asyncio.create_task(self.flood(command["symbol"], command["count"], command.get("rate", 0)))
        elif kind == "quit":
            raise SystemExit(0)
        emit(event="done", cmd=kind)

    async def stream_huge(self, connection, size):
        transport = connection.transport
        transport.write(bytes([0x81, 127]) + struct.pack(">Q", size))
        chunk = b"x" * 65536
        sent = 0
        try:
            while sent < size and not transport.is_closing():
                n = min(len(chunk), size - sent)
                transport.write(chunk[:n])
                sent += n
                while transport.get_write_buffer_size() > 1 << 20 and not transport.is_closing():
                    await asyncio.sleep(0.001)
        finally:
            emit(event="huge-sent", bytes=sent)

    async def stream_endless(self, connection):
        transport = connection.transport
        transport.write(frame(1, b"[", fin=False))
        sent = 0
        while not transport.is_closing():
            transport.write(frame(0, b"1," * 2048, fin=False))
            sent += 4096
            while transport.get_write_buffer_size() > 1 << 20 and not transport.is_closing():
                await asyncio.sleep(0.001)
            if sent % (1 << 20) == 0:
                await asyncio.sleep(0)
        emit(event="endless-sent", bytes=sent)

    async def flood(self, symbol, count, rate):
        """`count` trades. At `rate` per second each price carries its send time: `1.` then the wall clock in
        microseconds (16 digits), so a client can measure latency from the price alone. At rate 0, as fast as the
        socket takes them: a block of 1024 messages made once is written over and over, so the count is rounded up to
        whole blocks (venues that number their trades then repeat ids; Finnhub's format has none)."""
        start = time.monotonic()
        if rate > 0:
            for index in range(count):
                delay = start + index / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                price = "1.%016d" % int(time.time() * 1_000_000)
                self.raw(frame(1, self.venue.trade(symbol, price).encode()))
        else:
            block = b"".join(frame(1, self.venue.trade(symbol, "%d.%02d" % (60000 + i % 1000, i % 100)).encode())
                             for i in range(1024))
            sent = 0
            while sent < count and self.connections:
                self.raw(block)
                sent += 1024
                for connection in list(self.connections):
                    while connection.transport.get_write_buffer_size() > 4 << 20 and not connection.transport.is_closing():
                        await asyncio.sleep(0.0005)
                await asyncio.sleep(0)
        emit(event="flood-sent", count=count, seconds=round(time.monotonic() - start, 6))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--venue", required=True, choices=["finnhub", "binance", "coinbase", "kraken"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--heartbeat", type=float, default=1.0)
    parser.add_argument("--reject", type=int, default=0)
    parser.add_argument("--bad-accept", action="store_true")
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    exchange = Exchange(args)
    async with serve(exchange.handler, "127.0.0.1", args.port, ssl=context, compression=None, ping_interval=None,
                     max_size=1 << 20, process_request=exchange.process_request,
                     process_response=exchange.process_response) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening {port}", flush=True)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            try:
                await exchange.command(json.loads(line))
            except SystemExit:
                break
            except Exception as error:  # noqa: BLE001 - a bad command is reported, not fatal
                emit(event="command-error", reason=repr(error))


if __name__ == "__main__":
    asyncio.run(main())
