-- KEYS r, rd, money prefix  ARGV json, id, score, leaf hash (hex)  (after log.lib.lua, receipt.lib.lua)
return put_receipt(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], KEYS[3], ARGV[4])
