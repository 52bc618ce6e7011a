-- TPC-C Delivery (weight 4); -D warehouses=N
\set w random(1, :warehouses)
\set carrier random(1, 10)
SELECT tpcc_delivery(:w, :carrier);
