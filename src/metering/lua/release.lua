-- KEYS money prefix  ARGV callId  (after hold.lib.lua): 1 when a hold was released.
return release_hold(KEYS[1], ARGV[1]) and 1 or 0
