-- pgbench select-only with skewed access: account ids from a Gaussian
-- centred on the middle of the table (parameter 5: about 68% of reads fall
-- in 20% of the accounts).  Use with -D scale=N.
\set aid random_gaussian(1, 100000 * :scale, 5.0)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
