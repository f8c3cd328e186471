-- wrk script of `nox -s load` (benchmarks/load.py): a mix of listing requests on /api/v1/flights/.
--
-- Each wrk thread hands its connections the requests of the mix round-robin, from its own offset, so
-- every kind of request is in flight at any time. done() prints one line, "LOAD-RESULT <json>": wrk's
-- counts and error counters, the latency distribution (microseconds), the responses by status, the
-- distinct bodies of the responses that were not 2xx with their counts, and the requests sent per kind.
-- (wrk cannot tell which request a response answers; the server's access log gives statuses per kind.)

local base = "/api/v1/flights/"

local mix = {
  { name = "filter origin+dep_delay", query = "origin=JFK&dep_delay__gte=60" },
  { name = "filter carrier IN", query = "carrier=UA&carrier=AA" },
  { name = "search united", query = "search=united" },
  { name = "search kennedy", query = "search=kennedy" },
  { name = "order by -dep_delay,airline__name", query = "order_by=-dep_delay,airline__name" },
  { name = "relation filter dest tzone", query = "dest_airport__tzone=America/Los_Angeles" },
  { name = "deep page 3000 x 100", query = "page=3000&count=100" },
  { name = "deep page 33677", query = "page=33677" },
}

local threads = {}
local thread_id = 0

function setup(thread)
  thread:set("id", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

-- Per-thread state (each wrk thread has its own Lua state); globals, so done() can read them
-- through thread:get().
position = 0
sent = {}
statuses = {}
bodies = {}

function init(args)
  position = id or 0
  for index = 1, #mix do
    sent[index] = 0
  end
end

function request()
  position = position + 1
  local index = (position % #mix) + 1
  sent[index] = sent[index] + 1
  return wrk.format("GET", base .. "?" .. mix[index].query)
end

function response(status, headers, body)
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
  if status < 200 or status > 299 then
    -- The error bodies are few distinct texts (Litestar's {"status_code", "detail"}): count each.
    local text = key .. " " .. string.sub(body or "", 1, 300)
    bodies[text] = (bodies[text] or 0) + 1
  end
end

local function json_string(value)
  local escaped = tostring(value):gsub('[%c"\\]', function(char)
    return string.format("\\u%04x", string.byte(char))
  end)
  return '"' .. escaped .. '"'
end

function done(summary, latency, requests)
  local status_counts = {}
  local sent_counts = {}
  local body_counts = {}
  for _, thread in ipairs(threads) do
    local thread_statuses = thread:get("statuses")
    for key, count in pairs(thread_statuses) do
      status_counts[key] = (status_counts[key] or 0) + count
    end
    for text, count in pairs(thread:get("bodies")) do
      body_counts[text] = (body_counts[text] or 0) + count
    end
    local thread_sent = thread:get("sent")
    for index, count in pairs(thread_sent) do
      sent_counts[index] = (sent_counts[index] or 0) + count
    end
  end
  local parts = {}
  local function add(key, value)
    table.insert(parts, json_string(key) .. ":" .. value)
  end
  add("duration_us", string.format("%d", summary.duration))
  add("requests", string.format("%d", summary.requests))
  add("bytes", string.format("%d", summary.bytes))
  add("errors", string.format(
    '{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}',
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout
  ))
  local percentiles = {}
  for _, p in ipairs({ 50, 75, 90, 99, 99.9 }) do
    table.insert(percentiles, string.format('"%s":%d', tostring(p), latency:percentile(p)))
  end
  add("latency_us", string.format(
    '{"min":%d,"mean":%.1f,"stdev":%.1f,"max":%d,"percentiles":{%s}}',
    latency.min, latency.mean, latency.stdev, latency.max, table.concat(percentiles, ",")
  ))
  local statuses_json = {}
  for key, count in pairs(status_counts) do
    table.insert(statuses_json, json_string(key) .. ":" .. string.format("%d", count))
  end
  add("statuses", "{" .. table.concat(statuses_json, ",") .. "}")
  local bodies_json = {}
  for text, count in pairs(body_counts) do
    table.insert(bodies_json, string.format('{"response":%s,"count":%d}', json_string(text), count))
  end
  add("error_responses", "[" .. table.concat(bodies_json, ",") .. "]")
  local mix_json = {}
  for index, entry in ipairs(mix) do
    table.insert(mix_json, string.format(
      '{"name":%s,"query":%s,"sent":%d}', json_string(entry.name), json_string(entry.query), sent_counts[index] or 0
    ))
  end
  add("mix", "[" .. table.concat(mix_json, ",") .. "]")
  io.write("LOAD-RESULT {" .. table.concat(parts, ",") .. "}\n")
end
