-- TPC-C New-Order (weight 45); -D warehouses=N
\set w random(1, :warehouses)
\set d random(1, 10)
\set c ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set ol_cnt random(5, 15)
\set rbk random(1, 100)
SELECT tpcc_new_order(:w, :d, :c, :ol_cnt, :warehouses, :rbk = 1);
