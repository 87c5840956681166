"""Key layout and Lua scripts of the Redis vector-set store (``stores/redis_vectors.py``).

``P`` is the key prefix, ``pid`` the first 32 hex digits of SHA-256 of the partition's JSON
``[tenant, namespace, scope, embedder]``; every key of one partition carries the hash tag
``{pid}``, so each script touches one cluster slot:

- ``P:vs:{pid}:v``  vector set (element = entry key; attributes expiry, creation, model);
- ``P:vs:{pid}:p``  hash entry key -> entry JSON, each field expiring with its entry;
- ``P:vs:{pid}:x`` / ``:c``  sorted sets by ``expires_at`` / ``created_at``;
- ``P:vs:{pid}:m``  the partition's fences (``f:_``, ``f:<h(model)>``, ``w:<entry key>``)
  and ``part``; a write of an entry created before a fence covering it is refused.

Outside partitions: ``P:vs:meta`` (embedder, dim, format), ``P:vs:parts`` (pid -> partition;
a purge also scans, so losing it never keeps a purged answer) and ``P:vs:fence`` (global
fences per combination of purge filters, so a partition registered after a purge is fenced).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from itertools import product

UNFILTERED = "_"
FORMAT = 1


def h(value: str) -> str:
    """Short, separator-free digest of a selection value (64 bits)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]


def partition_id(tenant: str, namespace: str, scope: str, embedder: str) -> str:
    canonical = json.dumps([tenant, namespace, scope, embedder], separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def fence_field(tenant: str | None, namespace: str | None, model: str | None) -> str:
    """The global fence field of one purge's filters."""
    return "|".join(UNFILTERED if v is None else h(v) for v in (tenant, namespace, model))


def covering_fields(tenant: str, namespace: str, model: str) -> list[str]:
    """The 8 global fence fields whose purges cover an entry of (tenant, namespace, model)."""
    parts = [(h(tenant), UNFILTERED), (h(namespace), UNFILTERED), (h(model), UNFILTERED)]
    return ["|".join(combo) for combo in product(*parts)]


@dataclass(frozen=True, slots=True)
class Layout:
    prefix: str

    @property
    def meta(self) -> str:
        return f"{self.prefix}:vs:meta"

    @property
    def parts(self) -> str:
        return f"{self.prefix}:vs:parts"

    @property
    def fence(self) -> str:
        return f"{self.prefix}:vs:fence"

    @property
    def partition_pattern(self) -> str:
        """``SCAN MATCH`` pattern of every partition's keys (the prefix's glob characters
        escaped)."""
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in self.prefix)
        return f"{escaped}:vs:{{*}}:*"

    def partition(self, pid: str) -> list[str]:
        """The partition's keys, in the order the scripts take them: v, p, x, c, m."""
        base = f"{self.prefix}:vs:{{{pid}}}"
        return [f"{base}:v", f"{base}:p", f"{base}:x", f"{base}:c", f"{base}:m"]


WRITE = """
local key, created, expires = ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6])
local fence = tonumber(ARGV[8])
local f = redis.call('HMGET', KEYS[5], 'f:_', 'f:' .. ARGV[9], 'w:' .. key)
for i = 1, 3 do
  if f[i] and tonumber(f[i]) > fence then fence = tonumber(f[i]) end
end
if created < fence then return 0 end
if expires <= tonumber(ARGV[7]) then
  if not f[3] or expires > tonumber(f[3]) then redis.call('HSET', KEYS[5], 'w:' .. key, ARGV[6]) end
end
redis.call('VADD', KEYS[1], 'FP32', ARGV[2], key, 'NOQUANT', 'SETATTR', ARGV[3])
redis.call('HSET', KEYS[2], key, ARGV[4])
if ARGV[10] == '' then redis.call('HPERSIST', KEYS[2], 'FIELDS', 1, key)
else redis.call('HPEXPIRE', KEYS[2], ARGV[10], 'FIELDS', 1, key) end
redis.call('ZADD', KEYS[3], expires, key)
redis.call('ZADD', KEYS[4], created, key)
redis.call('HSETNX', KEYS[5], 'part', ARGV[11])
return 1
"""
"""KEYS: the partition's v, p, x, c, m. ARGV: entry key, FP32 vector, attributes JSON, entry
JSON, created_at, expires_at, now, the global fence covering it, h(model), the payload's
TTL in ms ('' never), the partition's JSON (kept in m as ``part``). Returns 1 stored, 0
refused by a fence. An entry written already expired (a withdrawal) also fences older
writes of its key (``w:<key>`` = its ``expires_at``)."""

NEAREST = """
local found = redis.call('VSIM', KEYS[1], 'FP32', ARGV[1], 'WITHSCORES', 'COUNT', ARGV[3],
  'EF', ARGV[4])
local now, limit, out = tonumber(ARGV[2]), tonumber(ARGV[5]), {}
for i = 1, #found, 2 do
  local expires = redis.call('ZSCORE', KEYS[3], found[i])
  if expires and tonumber(expires) > now then
    local payload = redis.call('HGET', KEYS[2], found[i])
    if payload then
      table.insert(out, found[i])
      table.insert(out, found[i + 1])
      table.insert(out, payload)
      if #out >= 3 * limit then return out end
    end
  end
end
return out
"""
"""KEYS: v, p, x. ARGV: FP32 query, now, candidates, EF, limit. Of the ``candidates`` nearest
elements, the first ``limit`` that are live at now (their ``expires_at`` in x) and whose
payload has not expired in Redis yet, closest first: a flat {key, score, entry JSON, ...}.
Checked after the search rather than with ``VSIM ... FILTER``, which costs 3-4x more here
(every candidate's attribute JSON is parsed); expired elements are few because the sweep
removes them, and when all candidates are expired the lookup is a miss, never an expired
answer. Metadata filters are applied by the caller on the entries returned."""

PURGE = """
local field = 'f:' .. ARGV[1]
local old = redis.call('HGET', KEYS[5], field)
if not old or tonumber(ARGV[3]) > tonumber(old) then redis.call('HSET', KEYS[5], field, ARGV[3]) end
if ARGV[2] == '' then
  local n = redis.call('ZCARD', KEYS[4])
  redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
  return n
end
local n, seen = 0, {}
local before = tonumber(ARGV[3])
local function consider(key)
  if seen[key] then return end
  seen[key] = true
  local found = redis.call('HGET', KEYS[2], key)
  if not found and redis.call('EXISTS', KEYS[1]) == 1 then
    found = redis.call('VGETATTR', KEYS[1], key)
  end
  local entry = found and cjson.decode(found)
  if entry and entry.model == ARGV[2] and (ARGV[4] == '1' or entry.created_at < before) then
    redis.call('VREM', KEYS[1], key)
    redis.call('HDEL', KEYS[2], key)
    redis.call('ZREM', KEYS[3], key)
    redis.call('ZREM', KEYS[4], key)
    n = n + 1
  end
end
for _, key in ipairs(redis.call('HKEYS', KEYS[2])) do consider(key) end
for _, key in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do consider(key) end
return n
"""
"""KEYS: v, p, x, c, m. ARGV: fence field suffix (``_`` or h(model)), model ('' for all),
the fence time, '1' to remove every covered entry ('0': only those created before it).
Records the fence, removes the covered entries; returns how many. Entries are found by their
payloads (what a lookup serves) and by ``c``, so losing any one of the partition's keys
hides none of them."""

PURGE_EXPIRED = """
local keys = redis.call('ZRANGE', KEYS[3], '-inf', ARGV[1], 'BYSCORE')
for _, key in ipairs(keys) do
  redis.call('VREM', KEYS[1], key)
  redis.call('HDEL', KEYS[2], key)
  redis.call('ZREM', KEYS[3], key)
  redis.call('ZREM', KEYS[4], key)
end
return #keys
"""
"""KEYS: v, p, x, c. ARGV: now. Removes every entry with expires_at <= now; returns how many."""
