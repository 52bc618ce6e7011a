-- TPC-C Payment (weight 43); -D warehouses=N
\set w random(1, :warehouses)
\set d random(1, 10)
\set c ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\set by_name random(1, 100)
\set name_n ((random(0, 255) | random(0, 999)) + 223) % 1000
SELECT tpcc_payment(:w, :d, :c, :by_name <= 60, :name_n, :warehouses);
