-- The Lua oracle test's script (run-lua.sh): recursion, strings, tables,
-- sorting with a comparison, coroutines (longjmp), pcall and error.
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local t = {}
for i = 1, 2000 do t[#t+1] = string.format("%d:%s", i, tostring(fib(i % 15))) end
table.sort(t, function(a, b) return a > b end)
local s = table.concat(t, ",")
local co = coroutine.wrap(function() for i = 1, 100 do coroutine.yield(i) end end)
local sum = 0
for i = 1, 100 do sum = sum + co() end
local ok = pcall(function() error("x") end)
print(#s, sum, ok, string.rep("ab", 10):gsub("a", "c"))
