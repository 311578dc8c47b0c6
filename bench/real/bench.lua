-- bench.lua - ordinary Lua work for the real-program benchmark
-- (bench/run-real.py): recursion, table sorts, string building and
-- pattern matching, closures and coroutines.  Prints a checksum so a
-- broken interpreter build shows.  Usage: lua bench.lua [scale]
local scale = tonumber(arg and arg[1]) or 1

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function sorts(n)
  local seed, sum = 42, 0
  local function rnd()
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed
  end
  for _ = 1, 4 do
    local t = {}
    for i = 1, n do t[i] = rnd() % 100000 end
    table.sort(t)
    table.sort(t, function(a, b) return a > b end)
    sum = sum + t[1] + t[n]
  end
  return sum
end

local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%s", i, string.rep("x", i % 7))
  end
  local s = table.concat(parts, ",")
  local count = 0
  for a, b in s:gmatch("(%d+):(x*)") do
    count = count + #b + (tonumber(a) % 3)
  end
  return count + #s:upper():lower()
end

local function closures(n)
  local function counter()
    local c = 0
    return function(k) c = c + k; return c end
  end
  local total = 0
  for i = 1, n do
    local f = counter()
    for k = 1, 10 do total = total + f(k) end
  end
  local co = coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
  end)
  for _ = 1, n do total = total + co() end
  return total
end

local sum = 0
for _ = 1, scale do
  sum = sum + fib(24)
  sum = sum + sorts(20000)
  sum = sum + strings(20000)
  sum = sum + closures(20000)
end
print(sum)
