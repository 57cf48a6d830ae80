-- wrk script: every request is a POST of the file named by BODY_FILE, with the Content-Type CONTENT_TYPE.
-- scripts/bench-peers connect drives Connect unary calls with it (wrk -s bench/wrk/post-file.lua …).
local file = assert(io.open(assert(os.getenv("BODY_FILE"), "BODY_FILE is not set"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = assert(os.getenv("CONTENT_TYPE"), "CONTENT_TYPE is not set")

-- A non-2xx answer means the benchmark is not measuring calls: count them so the run can be refused.
local failed = 0
function response(status, headers, body)
    if status ~= 200 then failed = failed + 1 end
end

function done(summary, latency, requests)
    io.write(string.format("non-200 answers: %d\n", failed))
end
