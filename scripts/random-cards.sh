# Sourced by scripts/loadtest.sh and scripts/service-latency.sh: wrk's requests for a new card
# each, and the renders behind the cards a server answered.

# Prints the Lua of wrk requests for a new card each: GET /random.png with a new seed. Each wrk
# thread has a Lua state of its own whose math.random gives the same numbers as the others', so the
# seed ends in the thread's number and its own count of requests (without them, the threads asked
# for the same cards at the same moments, and the server rendered each once for all of them).
random_cards_lua() {
  cat <<'LUA'
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", string.format("/random.png?seed=%d%d%06d", math.random(1, 2^31), id, counter))
end
LUA
}

# Prints "RENDERS CARDS": cards rendered, and /random cards answered 200, since the server on
# loopback port $1 started (its /metrics). A request that joins a render of the same card already
# under way (the single-flight table) is answered without a render of its own.
render_counts() {
  curl -fsS "http://127.0.0.1:$1/metrics" | awk '
    index($0, "innerpeace_render_duration_seconds_count{") == 1 { renders += $2 }
    index($0, "innerpeace_http_requests_total{route=\"/random.{format}\",status=\"200\"}") == 1 { cards += $2 }
    END { printf "%d %d\n", renders, cards }'
}
