#!/usr/bin/env python3
"""A mock of Apple's push service (APNs) for CoinWatch's tests and benchmark.

HTTP/2 over TLS (Python's ssl module, the h2 library), checking what APNs checks:
  - POST /3/device/<hex token> (405 MethodNotAllowed, 404 BadPath, 400 BadDeviceToken);
  - authorization: bearer <JWT>, the JWT signed ES256 by the key whose public half is given, with the
    expected kid (key id) and iss (team id), an iat neither in the future nor older than --max-token-age
    (403 MissingProviderToken, InvalidProviderToken, ExpiredProviderToken); a new token sooner than
    --min-token-interval after the previous one is answered 429 TooManyProviderTokenUpdates;
  - apns-topic (400 MissingTopic, TopicDisallowed), apns-push-type, apns-priority, apns-expiration,
    apns-collapse-id (at most 64 bytes), apns-id (a UUID) and the payload (at most 4096 bytes);
  - at most --max-streams concurrent streams per connection, advertised in SETTINGS and, as RFC 9113 has it,
    binding once the client has acknowledged them (before that the limit is unlimited); a client over it then
    is a protocol error, counted and answered by closing the connection.

Answers are scripted by the device token's first digits:
  410...          410 Unregistered
  400...          400 BadDeviceToken
  40d...          400 DeviceTokenNotForTopic
  429...          429 TooManyRequests the first time an apns-id arrives, then 200
  500<n>...       500 InternalServerError the first n times an apns-id arrives (n one hex digit), then 200;
                  500f... always 500
  anything else   200

Control: one command per line on stdin, each acknowledged by a JSON line on stdout
({"event": "ok", "command": ...}); the first stdout line is {"event": "listening", "port": N}.
  summary            print {"event": "summary", ...}: counts, duplicates, tokens, streams, times
  token              print {"event": "token", "jwt": ...}: the provider token accepted last (for h2load)
  drop-after N       after N more requests arrive, close every connection without answering what is open
  goaway-after N     after N more requests arrive, send GOAWAY, answer what was received, then close
  cut-after N        answer the Nth next request's headers (a 200 has nothing else) without ending its stream,
                     then close the connection: an answer that arrived on a connection that died behind it
  hold-after N       answer N more requests, then hold every answer until release
  hold | release     hold answers / send every held answer
  reset              forget the counts and records (the records file is truncated)
End of file on stdin stops the mock.

Run it from the tests' environment: "$(scripts/python-env)/bin/python" scripts/mock-apns.py --help
"""

import argparse
import asyncio
import base64
import hashlib
import json
import os
import re
import socket
import ssl
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HEX = re.compile(r"^[0-9a-fA-F]+$")


def emit(event, **fields):
    sys.stdout.write(json.dumps(dict(event=event, **fields), sort_keys=True) + "\n")
    sys.stdout.flush()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Verifier:
    """Checks provider tokens as APNs does; the signature check is cached per token text."""

    def __init__(self, public_key, key_id, team_id, max_age, min_interval):
        self.public_key = public_key
        self.key_id = key_id
        self.team_id = team_id
        self.max_age = max_age
        self.min_interval = min_interval
        self.checked = {}  # token text -> (reason or None, claims)
        self.current = None  # the token in use and when it was first seen
        self.current_since = 0.0

    def _check_signature(self, token):
        parts = token.split(".")
        if len(parts) != 3:
            return "InvalidProviderToken", {}
        try:
            header = json.loads(b64url_decode(parts[0]))
            claims = json.loads(b64url_decode(parts[1]))
            signature = b64url_decode(parts[2])
        except ValueError:
            return "InvalidProviderToken", {}
        if header.get("alg") != "ES256" or header.get("kid") != self.key_id or claims.get("iss") != self.team_id:
            return "InvalidProviderToken", claims
        if not isinstance(claims.get("iat"), int) or len(signature) != 64:
            return "InvalidProviderToken", claims
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        try:
            self.public_key.verify(der, (parts[0] + "." + parts[1]).encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return "InvalidProviderToken", claims
        return None, claims

    def check(self, token, now):
        """(status, reason, claims): status 0 when the token is acceptable."""
        if token not in self.checked:
            self.checked[token] = self._check_signature(token)
        reason, claims = self.checked[token]
        if reason:
            return 403, reason, claims
        iat = claims["iat"]
        if iat > now + 5:
            return 403, "InvalidProviderToken", claims
        if now - iat > self.max_age:
            return 403, "ExpiredProviderToken", claims
        if token != self.current:
            if self.current is not None and now - self.current_since < self.min_interval:
                return 429, "TooManyProviderTokenUpdates", claims
            self.current = token
            self.current_since = now
        return 0, "", claims


class State:
    """Everything the mock counts and records, shared by its connections."""

    def __init__(self, options, verifier):
        self.options = options
        self.verifier = verifier
        self.connections = set()
        self.connection_count = 0
        self.records_file = open(options.records, "w") if options.records else None
        self.drop_after = None
        self.goaway_after = None
        self.cut_after = None
        self.hold_after = None
        self.holding = False
        self.reset()

    def reset(self):
        self.requests = 0
        self.by_status = {}
        self.attempts = {}  # apns-id -> requests seen
        self.delivered = {}  # apns-id -> 200s sent
        self.tokens = {}  # JWT text digest -> {"iat", "requests", "first", "last"}
        self.max_streams = 0
        self.unanswered = 0
        self.sent_after_expiration = 0
        self.protocol_errors = 0
        self.first_time = None
        self.last_ok_time = None
        if self.records_file:
            self.records_file.seek(0)
            self.records_file.truncate()

    def record(self, entry):
        if self.records_file:
            self.records_file.write(json.dumps(entry, sort_keys=True) + "\n")
            self.records_file.flush()

    def summary(self):
        duplicates = {key: count for key, count in self.delivered.items() if count > 1}
        return dict(
            requests=self.requests,
            by_status={str(key): value for key, value in sorted(self.by_status.items())},
            delivered_ids=len(self.delivered),
            duplicate_deliveries=sum(count - 1 for count in duplicates.values()),
            duplicate_ids=sorted(duplicates)[:20],
            received_ids=len(self.attempts),
            tokens=[dict(digest=digest, **info) for digest, info in self.tokens.items()],
            max_concurrent_streams=self.max_streams,
            connections=self.connection_count,
            open_connections=len(self.connections),
            unanswered=self.unanswered,
            sent_after_expiration=self.sent_after_expiration,
            protocol_errors=self.protocol_errors,
            first_time=self.first_time,
            last_ok_time=self.last_ok_time,
        )


class APNsProtocol(asyncio.Protocol):
    def __init__(self, state):
        self.state = state
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=config)
        self.streams = {}  # stream id -> {"headers": dict, "body": bytearray}
        self.open_streams = set()
        self.held = []
        self.closing = False
        self.transport = None
        self.number = 0
        # Whether the client has acknowledged the stream limit (from then on it binds, and is measured).
        self.limit_in_effect = False

    # Connection life

    def connection_made(self, transport):
        self.transport = transport
        self.state.connection_count += 1
        self.number = self.state.connection_count
        self.state.connections.add(self)
        self.conn.local_settings = h2.settings.Settings(
            client=False, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
        self.conn.initiate_connection()
        # The stream limit goes out as an update, so h2 enforces it only once the client acknowledged it.
        self.conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.state.options.max_streams})
        self.conn.increment_flow_control_window(1 << 24)
        self.flush()

    def connection_lost(self, exc):
        self.state.connections.discard(self)
        self.state.unanswered += len(self.open_streams)
        self.open_streams.clear()

    def flush(self):
        data = self.conn.data_to_send()
        if data and self.transport and not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data):
        if self.closing:
            return
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            self.state.protocol_errors += 1
            emit("protocol_error", connection=self.number, error=str(error))
            self.flush()
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.SettingsAcknowledged):
                if h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS in event.changed_settings:
                    self.limit_in_effect = True
            elif isinstance(event, h2.events.RequestReceived):
                self.streams[event.stream_id] = {"headers": dict(event.headers), "body": bytearray()}
                self.open_streams.add(event.stream_id)
                if self.limit_in_effect:
                    self.state.max_streams = max(self.state.max_streams, len(self.open_streams))
                if event.stream_ended:
                    self.request_complete(event.stream_id)
            elif isinstance(event, h2.events.DataReceived):
                stream = self.streams.get(event.stream_id)
                if stream is not None:
                    stream["body"] += event.data
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                if event.stream_ended:
                    self.request_complete(event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                self.request_complete(event.stream_id)
            elif isinstance(event, h2.events.StreamReset):
                self.streams.pop(event.stream_id, None)
                self.open_streams.discard(event.stream_id)
            if self.closing:
                return
        self.flush()

    # Requests

    def request_complete(self, stream_id):
        stream = self.streams.pop(stream_id, None)
        if stream is None:
            return
        state = self.state
        now = time.time()
        state.requests += 1
        if state.first_time is None:
            state.first_time = now
        status, reason, entry = self.judge(stream["headers"], bytes(stream["body"]), now)
        entry.update(time=now, connection=self.number, stream=stream_id, status=status, reason=reason)
        if state.drop_after is not None:
            state.drop_after -= 1
            if state.drop_after <= 0:
                state.drop_after = None
                entry.update(status=0, reason="dropped")
                state.record(entry)
                self.drop()
                return
        if state.cut_after is not None:
            state.cut_after -= 1
            if state.cut_after <= 0:
                state.cut_after = None
                self.answer(stream_id, status, reason, entry, end_stream=False)
                self.cut()
                return
        if state.hold_after is not None:
            state.hold_after -= 1
            if state.hold_after < 0:
                state.hold_after = None
                state.holding = True
        if state.holding:
            state.record(dict(entry, status=0, reason="held"))
            self.held.append((stream_id, status, reason, entry))
            return
        self.answer(stream_id, status, reason, entry)
        if state.goaway_after is not None:
            state.goaway_after -= 1
            if state.goaway_after <= 0:
                state.goaway_after = None
                self.go_away()

    def judge(self, headers, body, now):
        """(status, reason, record) for one request, as APNs would answer it."""
        state = self.state
        apns_id = headers.get("apns-id", "")
        path = headers.get(":path", "")
        token = path[len("/3/device/"):] if path.startswith("/3/device/") else ""
        entry = dict(
            apns_id=apns_id, token=token, path=path, method=headers.get(":method"),
            topic=headers.get("apns-topic"), push_type=headers.get("apns-push-type"),
            priority=headers.get("apns-priority"), expiration=headers.get("apns-expiration"),
            collapse_id=headers.get("apns-collapse-id"), content_type=headers.get("content-type"),
            payload=body.decode("utf-8", "replace"),
        )
        if apns_id:
            state.attempts[apns_id] = state.attempts.get(apns_id, 0) + 1
        attempt = state.attempts.get(apns_id, 1)
        expiration = headers.get("apns-expiration", "")
        if expiration.isdigit() and int(expiration) != 0 and now > int(expiration) + 1:
            state.sent_after_expiration += 1
            entry["after_expiration"] = True
        if headers.get(":method") != "POST":
            return 405, "MethodNotAllowed", entry
        if not path.startswith("/3/device/"):
            return 404, "BadPath", entry
        if not HEX.match(token) or len(token) % 2 or not 64 <= len(token) <= 200:
            return 400, "BadDeviceToken", entry
        authorization = headers.get("authorization", "")
        if not authorization.lower().startswith("bearer "):
            return 403, "MissingProviderToken", entry
        jwt = authorization[7:]
        digest = hashlib.sha256(jwt.encode()).hexdigest()[:16]
        status, reason, claims = state.verifier.check(jwt, now)
        entry.update(jwt=digest, jwt_iat=claims.get("iat"), jwt_iss=claims.get("iss"))
        if status == 0:
            info = state.tokens.setdefault(digest, dict(iat=claims["iat"], requests=0, first=now, last=now))
            info["requests"] += 1
            info["last"] = now
        else:
            return status, reason, entry
        if not headers.get("apns-topic"):
            return 400, "MissingTopic", entry
        if headers.get("apns-topic") != state.options.topic:
            return 400, "TopicDisallowed", entry
        if headers.get("apns-push-type", "alert") not in ("alert", "background"):
            return 400, "InvalidPushType", entry
        if headers.get("apns-priority", "10") not in ("5", "10"):
            return 400, "BadPriority", entry
        if expiration and not expiration.isdigit():
            return 400, "BadExpirationDate", entry
        if len(headers.get("apns-collapse-id", "").encode()) > 64:
            return 400, "BadCollapseId", entry
        if apns_id and not UUID.match(apns_id):
            return 400, "BadMessageId", entry
        if not body:
            return 400, "PayloadEmpty", entry
        if len(body) > 4096:
            return 413, "PayloadTooLarge", entry
        lowered = token.lower()
        if lowered.startswith("410"):
            return 410, "Unregistered", entry
        if lowered.startswith("40d"):
            return 400, "DeviceTokenNotForTopic", entry
        if lowered.startswith("400"):
            return 400, "BadDeviceToken", entry
        if lowered.startswith("429") and attempt == 1:
            return 429, "TooManyRequests", entry
        if lowered.startswith("500"):
            failures = int(lowered[3], 16)
            if failures == 15 or attempt <= failures:
                return 500, "InternalServerError", entry
        return 200, "", entry

    def answer(self, stream_id, status, reason, entry, end_stream=True):
        state = self.state
        self.open_streams.discard(stream_id)
        headers = [(":status", str(status))]
        if entry.get("apns_id"):
            headers.append(("apns-id", entry["apns_id"]))
        body = b""
        if status != 200 and end_stream:
            fields = {"reason": reason}
            if status == 410:
                fields["timestamp"] = int(time.time() * 1000)
            body = json.dumps(fields).encode()
            headers += [("content-type", "application/json"), ("content-length", str(len(body)))]
        try:
            self.conn.send_headers(stream_id, headers, end_stream=end_stream and not body)
            if body:
                self.conn.send_data(stream_id, body, end_stream=True)
        except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
            state.unanswered += 1
            entry["status"] = 0
            entry["reason"] = "stream closed before the answer"
            state.record(entry)
            return
        state.by_status[status] = state.by_status.get(status, 0) + 1
        if status == 200:
            apns_id = entry.get("apns_id", "")
            state.delivered[apns_id] = state.delivered.get(apns_id, 0) + 1
            state.last_ok_time = time.time()
        entry["answered"] = time.time()
        state.record(entry)
        self.flush()

    def release(self):
        held, self.held = self.held, []
        for stream_id, status, reason, entry in held:
            self.answer(stream_id, status, reason, entry)

    # Commands

    def drop(self):
        """Ends the connection at once: nothing more is answered; what was written so far still reaches the client."""
        self.closing = True
        self.state.unanswered += len(self.open_streams)
        for stream_id, _, _, entry in self.held:
            entry.update(status=0, reason="dropped")
            self.state.record(entry)
        self.held = []
        self.open_streams.clear()
        self.flush()
        self.end_connection()

    def end_connection(self):
        """Ends the TCP connection once everything written has left, the way a server's close looks to its client:
        every answer sent before it, then end of file. The client's bytes are still read (and ignored), so the end
        is never a reset, which could discard answers the client has not read yet. (transport.close() on TLS would
        wait, up to asyncio's 30 s SSL shutdown timeout, for the client's close_notify, holding the connection open,
        and reset it if the client sent data meanwhile.)"""
        if self.transport.is_closing():
            return
        if self.transport.get_write_buffer_size() > 0:
            asyncio.get_running_loop().call_later(0.01, self.end_connection)
            return
        try:
            self.transport.get_extra_info("socket").shutdown(socket.SHUT_WR)
        except OSError:
            self.transport.abort()

    def cut(self):
        """Ends the connection right after the last answer, without ending its stream or saying GOAWAY."""
        self.closing = True
        self.state.unanswered += len(self.open_streams)
        self.open_streams.clear()
        self.flush()
        self.end_connection()

    def go_away(self):
        """GOAWAY naming the last stream received; the streams after it are not processed, then the close."""
        self.conn.close_connection(error_code=0, last_stream_id=self.conn.highest_inbound_stream_id)
        self.flush()
        self.closing = True
        self.state.unanswered += len(self.open_streams)
        self.open_streams.clear()
        self.end_connection()


def command(state, line):
    words = line.split()
    if not words:
        return
    name, arguments = words[0], words[1:]
    if name == "summary":
        emit("summary", **state.summary())
        return
    if name == "token":
        # The provider token accepted last, for a load tool (h2load) to send the same requests.
        emit("token", jwt=state.verifier.current or "")
        return
    if name == "drop-after":
        state.drop_after = int(arguments[0])
    elif name == "goaway-after":
        state.goaway_after = int(arguments[0])
    elif name == "cut-after":
        state.cut_after = int(arguments[0])
    elif name == "hold-after":
        state.hold_after = int(arguments[0])
    elif name == "hold":
        state.holding = True
    elif name == "release":
        state.holding = False
        state.hold_after = None
        for connection in list(state.connections):
            connection.release()
    elif name == "drop":
        for connection in list(state.connections):
            connection.drop()
    elif name == "reset":
        state.reset()
    else:
        emit("error", command=line.strip(), message="unknown command")
        return
    emit("ok", command=line.strip())


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert", required=True, help="server certificate chain (PEM)")
    parser.add_argument("--key", required=True, help="server private key (PEM)")
    parser.add_argument("--public-key", required=True, help="public half of the provider's ES256 key (PEM)")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--max-streams", type=int, default=1000, help="SETTINGS_MAX_CONCURRENT_STREAMS")
    parser.add_argument("--max-token-age", type=float, default=3600, help="seconds (APNs: an hour)")
    parser.add_argument("--min-token-interval", type=float, default=0,
                        help="a new token sooner than this (seconds) is refused (APNs: 20 minutes)")
    parser.add_argument("--records", help="append one JSON line per request to this file")
    options = parser.parse_args()

    with open(options.public_key, "rb") as handle:
        public_key = serialization.load_pem_public_key(handle.read())
    verifier = Verifier(public_key, options.key_id, options.team_id, options.max_token_age, options.min_token_interval)
    state = State(options, verifier)

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(options.cert, options.key)
    context.set_alpn_protocols(["h2"])

    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: APNsProtocol(state), options.host, options.port, ssl=context)
    emit("listening", port=server.sockets[0].getsockname()[1])

    finished = loop.create_future()
    buffer = bytearray()

    def readable():
        chunk = os.read(sys.stdin.fileno(), 65536)
        if not chunk:
            loop.remove_reader(sys.stdin.fileno())
            if not finished.done():
                finished.set_result(None)
            return
        buffer.extend(chunk)
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            command(state, line.decode("utf-8", "replace"))

    loop.add_reader(sys.stdin.fileno(), readable)
    await finished
    server.close()
    for connection in list(state.connections):
        connection.transport.close()


if __name__ == "__main__":
    asyncio.run(main())
