-- TPC-C Stock-Level (weight 4); -D warehouses=N
\set w random(1, :warehouses)
\set d random(1, 10)
\set threshold random(10, 20)
SELECT tpcc_stock_level(:w, :d, :threshold);
