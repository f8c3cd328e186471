-- wrk script of benchmarks/bench.py: cycles through the paths of BENCH_PATHS (one per line) and
-- prints one JSON line with the run's figures (times in microseconds).
local paths = {}
for path in string.gmatch(os.getenv("BENCH_PATHS") or "/", "[^\n]+") do
  table.insert(paths, path)
end
local next_path = 0

request = function()
  next_path = next_path % #paths + 1
  return wrk.format("GET", paths[next_path])
end

done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH-WRK {"requests": %d, "duration_us": %d, "p50_us": %d, "p90_us": %d, "p99_us": %d, "min_us": %d, ' ..
    '"max_us": %d, "mean_us": %.1f, "non2xx": %d, "socket_errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.min, latency.max, latency.mean, errors.status, errors.connect + errors.read + errors.write + errors.timeout
  ))
end
