/* A driver for passlab's real-program test: runs one of a few Lua programs
 * on Lua 5.4 (the sources bundled in the lua-src crate, whose interpreter
 * loop in lvm.c dispatches with computed goto under clang) and returns its
 * result, so that a JIT call and a native build can be compared. */
#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"

static const char *const PROGRAMS[] = {
  /* 0: recursion */
  "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end\n"
  "return fib(...)",
  /* 1: tables (a sieve) */
  "local n = ... local composite, count = {}, 0\n"
  "for i = 2, n do if not composite[i] then count = count + 1\n"
  "  for j = i * i, n, i do composite[j] = true end end end\n"
  "return count",
  /* 2: strings */
  "local n = ... local t = {}\n"
  "for i = 1, n do t[#t + 1] = string.format('%d:%x', i, i * 7) end\n"
  "local s, h = table.concat(t, ','), 0\n"
  "for k = 1, #s do h = (h * 31 + s:byte(k)) % 2147483647 end\n"
  "return h",
  /* 3: sorting with a closure */
  "local n = ... local a, x = {}, 12345\n"
  "for i = 1, n do x = (x * 1103515245 + 12345) % 2147483648; a[i] = x end\n"
  "table.sort(a, function(p, q) return p > q end)\n"
  "local h = 0 for i = 1, n, 7 do h = (h + a[i]) % 1000000007 end\n"
  "return h",
  /* 4: coroutines */
  "local n = ...\n"
  "local co = coroutine.wrap(function() for i = 1, n do coroutine.yield(i * i) end end)\n"
  "local s = 0 for i = 1, n do s = s + co() end\n"
  "return s",
  /* 5: an error raised and caught (setjmp/longjmp) */
  "local n = ...\n"
  "local ok, e = pcall(function() error({ code = n }) end)\n"
  "return (not ok) and e.code * 2 or -1",
  /* 6: floating point and the math library */
  "local n = ... local s = 0.0\n"
  "for i = 1, n do s = s + math.sin(i) * math.sqrt(i) end\n"
  "return math.floor(s * 1000) % 1000000007",
};

/* The result of program `program` run with `arg`; negative on a failure. */
long lua_run(int program, long arg) {
  if (program < 0 || program >= (int)(sizeof PROGRAMS / sizeof *PROGRAMS))
    return -1;
  lua_State *L = luaL_newstate();
  if (!L)
    return -2;
  luaL_openlibs(L);
  long result = -3;
  if (luaL_loadstring(L, PROGRAMS[program]) == LUA_OK) {
    lua_pushinteger(L, arg);
    result = lua_pcall(L, 1, 1, 0) == LUA_OK ? (long)lua_tointeger(L, -1) : -4;
  }
  lua_close(L);
  return result;
}
