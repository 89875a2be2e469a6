-- KEYS money prefix  ARGV clock ('' = the server's), limit  (after hold.lib.lua): how many were released.
return sweep(KEYS[1], clock_ms(ARGV[1]), tonumber(ARGV[2]))
