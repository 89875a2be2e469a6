-- KEYS p, ps, po  (after principal.lib.lua)
return read_principal(KEYS[1], KEYS[2], KEYS[3])
