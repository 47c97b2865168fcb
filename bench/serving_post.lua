-- wrk script for bench/serving_bench.sh: POSTs the JSON body in $KILN_SERVE_BODY.
local f = assert(io.open(os.getenv("KILN_SERVE_BODY"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
wrk.headers["Content-Type"] = "application/json"
f:close()

function done(summary, latency, requests)
  io.write(string.format("RESULT requests/s %.1f p50_ms %.2f p99_ms %.2f errors %d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1e3, latency:percentile(99) / 1e3,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
