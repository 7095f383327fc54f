/**
 * Lua scripts of the Redis ledger. Every key of one ledger shares the hash tag in its prefix
 * ("{infergate:cost}:…"), so the scripts also run on Redis Cluster: all keys live in one slot,
 * which is what lets a script build line keys from the reservation it reads.
 *
 * Keys (P = prefix):
 *   P:res            hash  reservation id → "amount\nline\nline…"
 *   P:resexp         zset  reservation id, score = expiry (ms)
 *   P:rsv:<line>     string  nano-USD held by live reservations on the line
 *   P:spent:<line>:<bucket start ms>   string  nano-USD settled in that bucket (with a TTL)
 *   P:day:<YYYY-MM-DD>  hash  "<tenant>\t<key>\t<model>\t<provider>\t<metric>" → integer
 * Amounts are integers (nano-USD) passed as strings, so INCRBY keeps them exact.
 */

/** Drops reservations whose expiry is ≤ now (at most 512 per call), returning their hold. */
const SWEEP = `
local function drop(prefix, id)
  local record = redis.call('HGET', KEYS[1], id)
  if record then
    local amount = nil
    for part in string.gmatch(record, '[^\\n]+') do
      if amount == nil then amount = part else
        local key = prefix .. ':rsv:' .. part
        if redis.call('DECRBY', key, amount) <= 0 then redis.call('DEL', key) end
      end
    end
    redis.call('HDEL', KEYS[1], id)
  end
  redis.call('ZREM', KEYS[2], id)
end
local function sweep(prefix, now)
  local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 512)
  for _, id in ipairs(expired) do drop(prefix, id) end
end
local function spent(prefix, line, first, count)
  local keys = {}
  for i = 0, count - 1 do keys[#keys + 1] = prefix .. ':spent:' .. line .. ':' .. ARGV[first + i] end
  local total = 0
  if #keys > 0 then
    for _, value in ipairs(redis.call('MGET', unpack(keys))) do
      if value then total = total + tonumber(value) end
    end
  end
  return total
end
`;

/**
 * KEYS: res, resexp. ARGV: prefix, now, id, amount, expiresAt, lineCount, then per line:
 * key, limit ("" = none), bucketCount, bucket…  Returns {1, spent, reserved, …} or
 * {0, failedIndex (1-based), spent, reserved, …}.
 */
export const RESERVE_SCRIPT = `${SWEEP}
local prefix, now, id, amount = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
sweep(prefix, now)
local lineCount = tonumber(ARGV[6])
local states, lines, failed = {}, {}, 0
local at = 7
for i = 1, lineCount do
  local line, limit, count = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])
  local total = spent(prefix, line, at + 3, count)
  local reserved = tonumber(redis.call('GET', prefix .. ':rsv:' .. line) or '0')
  states[#states + 1] = total
  states[#states + 1] = reserved
  lines[#lines + 1] = line
  if failed == 0 and limit ~= '' and total + reserved + amount > tonumber(limit) then failed = i end
  at = at + 3 + count
end
if failed > 0 then
  table.insert(states, 1, failed)
  table.insert(states, 1, 0)
  return states
end
for _, line in ipairs(lines) do redis.call('INCRBY', prefix .. ':rsv:' .. line, ARGV[4]) end
redis.call('HSET', KEYS[1], id, ARGV[4] .. '\\n' .. table.concat(lines, '\\n'))
redis.call('ZADD', KEYS[2], ARGV[5], id)
table.insert(states, 1, 1)
return states
`;

/**
 * KEYS: res, resexp. ARGV: prefix, now, id, actual ("" = unpriced), lineCount, then per line:
 * key, bucket, ttlMs; then day, group field, dayTtlMs, inputTokens, outputTokens. TTLs are relative
 * (PEXPIRE) so that they follow the caller's clock, which tests inject.
 */
export const SETTLE_SCRIPT = `${SWEEP}
local prefix, now, id, actual = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
drop(prefix, id)
sweep(prefix, now)
local lineCount = tonumber(ARGV[5])
local at = 6
for i = 1, lineCount do
  if actual ~= '' and actual ~= '0' then
    local key = prefix .. ':spent:' .. ARGV[at] .. ':' .. ARGV[at + 1]
    redis.call('INCRBY', key, actual)
    redis.call('PEXPIRE', key, ARGV[at + 2])
  end
  at = at + 3
end
local day, field = prefix .. ':day:' .. ARGV[at], ARGV[at + 1]
redis.call('HINCRBY', day, field .. '\\tcalls', 1)
if actual == '' then redis.call('HINCRBY', day, field .. '\\tunpriced', 1)
else redis.call('HINCRBY', day, field .. '\\tnano', actual) end
redis.call('HINCRBY', day, field .. '\\tin', ARGV[at + 3])
redis.call('HINCRBY', day, field .. '\\tout', ARGV[at + 4])
redis.call('PEXPIRE', day, ARGV[at + 2])
return 1
`;

/** KEYS: res, resexp. ARGV: prefix, now, id. */
export const RELEASE_SCRIPT = `${SWEEP}
drop(ARGV[1], ARGV[3])
sweep(ARGV[1], ARGV[2])
return 1
`;

/**
 * KEYS: res, resexp. ARGV: prefix, now, lineCount, then per line: key, bucketCount, bucket…
 * Returns {spent, reserved, …}.
 */
export const INSPECT_SCRIPT = `${SWEEP}
local prefix = ARGV[1]
sweep(prefix, ARGV[2])
local states, at = {}, 4
for i = 1, tonumber(ARGV[3]) do
  local line, count = ARGV[at], tonumber(ARGV[at + 1])
  states[#states + 1] = spent(prefix, line, at + 2, count)
  states[#states + 1] = tonumber(redis.call('GET', prefix .. ':rsv:' .. line) or '0')
  at = at + 2 + count
end
return states
`;
