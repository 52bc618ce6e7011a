-- bench/workloads/tpcc/schema.sql: a TPC-C-like workload for pgbench.
--
-- The nine TPC-C tables, a set-based loader by warehouse, and the five
-- transactions as PL/pgSQL functions called by the pgbench scripts beside
-- this file.  Differences from the TPC-C specification, all deliberate:
--   * no terminals, keying or think times: pgbench clients run flat out;
--   * per-line inputs of New-Order (items, quantities, remote warehouses)
--     are drawn inside tpcc_new_order, the rest by pgbench;
--   * New-Order visits its items in ascending order so that concurrent
--     New-Orders cannot deadlock on stock rows;
--   * Delivery runs in the foreground and skips districts whose oldest
--     new order another Delivery holds (SKIP LOCKED).
-- tpmC is the number of committed New-Orders per minute, measured as the
-- growth of sum(d_next_o_id), which only committed New-Orders advance.

SET client_min_messages = warning;

DROP TABLE IF EXISTS warehouse, district, customer, history, new_order,
	orders, order_line, item, stock CASCADE;

CREATE TABLE warehouse (
	w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20),
	w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9),
	w_tax numeric(4, 4), w_ytd numeric(12, 2)) WITH (fillfactor = 50);
CREATE TABLE district (
	d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10),
	d_street_1 varchar(20), d_street_2 varchar(20), d_city varchar(20),
	d_state char(2), d_zip char(9), d_tax numeric(4, 4), d_ytd numeric(12, 2),
	d_next_o_id int) WITH (fillfactor = 50);
CREATE TABLE customer (
	c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL,
	c_first varchar(16), c_middle char(2), c_last varchar(16),
	c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20),
	c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp,
	c_credit char(2), c_credit_lim numeric(12, 2), c_discount numeric(4, 4),
	c_balance numeric(12, 2), c_ytd_payment numeric(12, 2),
	c_payment_cnt int, c_delivery_cnt int, c_data varchar(500))
	WITH (fillfactor = 90);
CREATE TABLE history (
	h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int,
	h_date timestamp, h_amount numeric(6, 2), h_data varchar(24));
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL);
CREATE TABLE orders (
	o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int,
	o_entry_d timestamp, o_carrier_id int, o_ol_cnt int, o_all_local int);
CREATE TABLE order_line (
	ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL,
	ol_number int NOT NULL, ol_i_id int, ol_supply_w_id int,
	ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6, 2),
	ol_dist_info char(24));
CREATE TABLE item (
	i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5, 2),
	i_data varchar(50));
CREATE TABLE stock (
	s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int,
	s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24),
	s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24),
	s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24),
	s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int,
	s_data varchar(50)) WITH (fillfactor = 90);

-- Random alphanumeric string of length between lo and hi.
CREATE OR REPLACE FUNCTION tpcc_astring(lo int, hi int) RETURNS text
LANGUAGE sql VOLATILE AS $$
	SELECT substr(repeat(md5(random()::text), 2), 1, lo + (random() * (hi - lo))::int)
$$;

-- i_data / s_data: 10% contain "ORIGINAL".
CREATE OR REPLACE FUNCTION tpcc_data_string() RETURNS text
LANGUAGE sql VOLATILE AS $$
	SELECT CASE WHEN random() < 0.1
		THEN overlay(tpcc_astring(26, 50) PLACING 'ORIGINAL' FROM 5 FOR 8)
		ELSE tpcc_astring(26, 50) END
$$;

-- The customer last name made of three syllables of n (0..999).
CREATE OR REPLACE FUNCTION tpcc_lastname(n int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
	SELECT s[n / 100 + 1] || s[(n / 10) % 10 + 1] || s[n % 10 + 1]
	FROM (SELECT ARRAY['BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI',
					   'CALLY', 'ATION', 'EING'] AS s) x
$$;

-- NURand(A, x, y) with the run-time constant C.
CREATE OR REPLACE FUNCTION tpcc_nurand(a int, x int, y int, c int) RETURNS int
LANGUAGE sql VOLATILE AS $$
	SELECT ((((random() * a)::int | (x + (random() * (y - x))::int)) + c) % (y - x + 1)) + x
$$;

CREATE OR REPLACE FUNCTION tpcc_load_items() RETURNS void
LANGUAGE sql AS $$
	INSERT INTO item
	SELECT i, 1 + (random() * 9999)::int, tpcc_astring(14, 24),
		   round((1 + random() * 99)::numeric, 2), tpcc_data_string()
	FROM generate_series(1, 100000) i;
$$;

-- Load one warehouse with its districts, customers, history, orders,
-- order lines, new orders and stock, as the specification's section 4.3.
CREATE OR REPLACE FUNCTION tpcc_load_warehouse(w int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO warehouse VALUES (w, tpcc_astring(6, 10), tpcc_astring(10, 20),
		tpcc_astring(10, 20), tpcc_astring(10, 20), 'CA', '123411111',
		round((random() * 0.2)::numeric, 4), 300000);

	INSERT INTO district
	SELECT d, w, tpcc_astring(6, 10), tpcc_astring(10, 20), tpcc_astring(10, 20),
		   tpcc_astring(10, 20), 'CA', '123411111',
		   round((random() * 0.2)::numeric, 4), 30000, 3001
	FROM generate_series(1, 10) d;

	INSERT INTO customer
	SELECT c, d, w, tpcc_astring(8, 16), 'OE',
		   tpcc_lastname(CASE WHEN c <= 1000 THEN c - 1 ELSE tpcc_nurand(255, 0, 999, 157) END),
		   tpcc_astring(10, 20), tpcc_astring(10, 20), tpcc_astring(10, 20), 'CA',
		   '123411111', lpad((random() * 1e15)::bigint::text, 16, '0'), now(),
		   CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000,
		   round((random() * 0.5)::numeric, 4), -10, 10, 1, 0, tpcc_astring(300, 500)
	FROM generate_series(1, 10) d, generate_series(1, 3000) c;

	INSERT INTO history
	SELECT c, d, w, d, w, now(), 10, tpcc_astring(12, 24)
	FROM generate_series(1, 10) d, generate_series(1, 3000) c;

	-- o_c_id is a random permutation of the customers of each district.
	INSERT INTO orders
	SELECT o, d, w, c, now(), CASE WHEN o < 2101 THEN 1 + (random() * 9)::int END,
		   5 + (random() * 10)::int, 1
	FROM (SELECT d, row_number() OVER (PARTITION BY d ORDER BY random())::int AS o,
				 c
		  FROM generate_series(1, 10) d, generate_series(1, 3000) c) p;

	INSERT INTO order_line
	SELECT o_id, o_d_id, w, n, 1 + (random() * 99999)::int, w,
		   CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
		   CASE WHEN o_id < 2101 THEN 0 ELSE round((0.01 + random() * 9999.98)::numeric, 2) END,
		   tpcc_astring(24, 24)
	FROM orders, generate_series(1, o_ol_cnt) n
	WHERE o_w_id = w;

	INSERT INTO new_order
	SELECT o, d, w FROM generate_series(1, 10) d, generate_series(2101, 3000) o;

	INSERT INTO stock
	SELECT i, w, 10 + (random() * 90)::int,
		   tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
		   tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
		   tpcc_astring(24, 24), tpcc_astring(24, 24), tpcc_astring(24, 24),
		   tpcc_astring(24, 24), 0, 0, 0, tpcc_data_string()
	FROM generate_series(1, 100000) i;
END
$$;

-- Keys and the secondary indexes the transactions need.
CREATE OR REPLACE FUNCTION tpcc_index() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	ALTER TABLE warehouse ADD PRIMARY KEY (w_id);
	ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
	ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
	CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first);
	ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
	ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
	CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
	ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
	ALTER TABLE item ADD PRIMARY KEY (i_id);
	ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);
END
$$;

-- Pick a customer by last name: the one in the middle of those with the
-- name, ordered by first name (spec 2.5.2.2); NULL if none.
CREATE OR REPLACE FUNCTION tpcc_customer_by_name(w int, d int, name text) RETURNS int
LANGUAGE sql STABLE AS $$
	SELECT c_id FROM (
		SELECT c_id, row_number() OVER (ORDER BY c_first) AS r, count(*) OVER () AS n
		FROM customer WHERE c_w_id = w AND c_d_id = d AND c_last = name) x
	WHERE r = (n + 1) / 2
$$;

-- New-Order (spec 2.4).  Returns the order id, or -1 for the 1% of orders
-- with an unused item number, which roll back.
CREATE OR REPLACE FUNCTION tpcc_new_order(w int, d int, c int, ol_cnt int,
										  warehouses int, rollback bool)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	o int;
	items int[];
	supply int[];
	qty int[];
	v_price numeric;
	v_dist char(24);
BEGIN
	PERFORM w_tax FROM warehouse WHERE w_id = w;
	UPDATE district SET d_next_o_id = d_next_o_id + 1
	WHERE d_w_id = w AND d_id = d RETURNING d_next_o_id - 1 INTO o;
	PERFORM c_discount, c_last, c_credit FROM customer
	WHERE c_w_id = w AND c_d_id = d AND c_id = c;

	-- The order's lines, in the order they lock stock rows.
	SELECT array_agg(i ORDER BY s, i), array_agg(s ORDER BY s, i), array_agg(q ORDER BY s, i)
	INTO items, supply, qty
	FROM (SELECT CASE WHEN rollback AND k = ol_cnt THEN 100001
					  ELSE tpcc_nurand(8191, 1, 100000, 7911) END AS i,
				 CASE WHEN warehouses > 1 AND random() < 0.01
					  THEN 1 + ((w + (random() * (warehouses - 2))::int) % warehouses)
					  ELSE w END AS s,
				 1 + (random() * 9)::int AS q
		  FROM generate_series(1, ol_cnt) k) l;

	INSERT INTO orders VALUES (o, d, w, c, now(), NULL, ol_cnt,
		(SELECT bool_and(x = w)::int FROM unnest(supply) x));
	INSERT INTO new_order VALUES (o, d, w);

	FOR k IN 1..ol_cnt LOOP
		SELECT i_price INTO v_price FROM item WHERE i_id = items[k];
		IF NOT FOUND THEN
			RAISE EXCEPTION 'tpcc: unused item number' USING ERRCODE = 'P0002';
		END IF;
		UPDATE stock SET
			s_quantity = CASE WHEN s_quantity - qty[k] >= 10
							  THEN s_quantity - qty[k] ELSE s_quantity - qty[k] + 91 END,
			s_ytd = s_ytd + qty[k], s_order_cnt = s_order_cnt + 1,
			s_remote_cnt = s_remote_cnt + (supply[k] <> w)::int
		WHERE s_w_id = supply[k] AND s_i_id = items[k]
		RETURNING CASE d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
			WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
			WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
			ELSE s_dist_10 END INTO v_dist;
		INSERT INTO order_line VALUES (o, d, w, k, items[k], supply[k],
			NULL, qty[k], qty[k] * v_price, v_dist);
	END LOOP;
	RETURN o;
EXCEPTION
	WHEN no_data_found THEN
		RETURN -1;
END
$$;

-- Payment (spec 2.5): 60% by last name, 15% through a remote warehouse.
CREATE OR REPLACE FUNCTION tpcc_payment(w int, d int, c int, by_name bool,
										name_n int, warehouses int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	amount numeric := round((1 + random() * 4999)::numeric, 2);
	c_w int := w;
	c_d int := d;
BEGIN
	IF warehouses > 1 AND random() < 0.15 THEN
		c_w := 1 + ((w + (random() * (warehouses - 2))::int) % warehouses);
		c_d := 1 + (random() * 9)::int;
	END IF;
	IF by_name THEN
		c := tpcc_customer_by_name(c_w, c_d, tpcc_lastname(name_n));
		IF c IS NULL THEN
			c := 1;
		END IF;
	END IF;
	UPDATE warehouse SET w_ytd = w_ytd + amount WHERE w_id = w;
	UPDATE district SET d_ytd = d_ytd + amount WHERE d_w_id = w AND d_id = d;
	UPDATE customer SET
		c_balance = c_balance - amount, c_ytd_payment = c_ytd_payment + amount,
		c_payment_cnt = c_payment_cnt + 1,
		c_data = CASE WHEN c_credit = 'BC'
			THEN left(format('%s %s %s %s %s %s | ', c, c_d, c_w, d, w, amount) || c_data, 500)
			ELSE c_data END
	WHERE c_w_id = c_w AND c_d_id = c_d AND c_id = c;
	INSERT INTO history VALUES (c, c_d, c_w, d, w, now(), amount, 'payment');
END
$$;

-- Order-Status (spec 2.6): read-only.
CREATE OR REPLACE FUNCTION tpcc_order_status(w int, d int, c int, by_name bool, name_n int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	o int;
	lines int;
BEGIN
	IF by_name THEN
		c := coalesce(tpcc_customer_by_name(w, d, tpcc_lastname(name_n)), 1);
	END IF;
	PERFORM c_balance, c_first, c_middle, c_last FROM customer
	WHERE c_w_id = w AND c_d_id = d AND c_id = c;
	SELECT max(o_id) INTO o FROM orders WHERE o_w_id = w AND o_d_id = d AND o_c_id = c;
	SELECT count(*) INTO lines FROM (
		SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
		FROM order_line WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o) x;
	RETURN lines;
END
$$;

-- Delivery (spec 2.7): the oldest undelivered order of each district.
CREATE OR REPLACE FUNCTION tpcc_delivery(w int, carrier int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	d int;
	o int;
	c int;
	total numeric;
	delivered int := 0;
BEGIN
	FOR d IN 1..10 LOOP
		SELECT no_o_id INTO o FROM new_order
		WHERE no_w_id = w AND no_d_id = d
		ORDER BY no_o_id LIMIT 1 FOR UPDATE SKIP LOCKED;
		CONTINUE WHEN NOT FOUND;
		DELETE FROM new_order WHERE no_w_id = w AND no_d_id = d AND no_o_id = o;
		UPDATE orders SET o_carrier_id = carrier
		WHERE o_w_id = w AND o_d_id = d AND o_id = o RETURNING o_c_id INTO c;
		UPDATE order_line SET ol_delivery_d = now()
		WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
		SELECT sum(ol_amount) INTO total FROM order_line
		WHERE ol_w_id = w AND ol_d_id = d AND ol_o_id = o;
		UPDATE customer SET c_balance = c_balance + total,
			c_delivery_cnt = c_delivery_cnt + 1
		WHERE c_w_id = w AND c_d_id = d AND c_id = c;
		delivered := delivered + 1;
	END LOOP;
	RETURN delivered;
END
$$;

-- Stock-Level (spec 2.8): read-only.
CREATE OR REPLACE FUNCTION tpcc_stock_level(w int, d int, threshold int)
RETURNS bigint LANGUAGE sql STABLE AS $$
	SELECT count(DISTINCT s_i_id)
	FROM district
	JOIN order_line ON ol_w_id = w AND ol_d_id = d
		AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id
	JOIN stock ON s_w_id = w AND s_i_id = ol_i_id
	WHERE d_w_id = w AND d_id = d AND s_quantity < threshold
$$;

-- The specification's consistency conditions 1 to 4 (section 3.3.2); each
-- row that comes back names a violated condition.
CREATE OR REPLACE FUNCTION tpcc_consistency()
RETURNS TABLE (condition int, detail text) LANGUAGE sql STABLE AS $$
	SELECT 1, 'w_ytd <> sum(d_ytd) for warehouse ' || w_id
	FROM warehouse JOIN (SELECT d_w_id, sum(d_ytd) s FROM district GROUP BY d_w_id) x
		ON x.d_w_id = w_id
	WHERE w_ytd <> s
	UNION ALL
	SELECT 2, format('d_next_o_id - 1 <> max(o_id) for district %s/%s', d_w_id, d_id)
	FROM district
	WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id)
	   OR d_next_o_id - 1 <> (SELECT coalesce(max(no_o_id), d_next_o_id - 1) FROM new_order
							  WHERE no_w_id = d_w_id AND no_d_id = d_id)
	UNION ALL
	SELECT 3, format('new_order ids not contiguous in district %s/%s', no_w_id, no_d_id)
	FROM new_order GROUP BY no_w_id, no_d_id
	HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)
	UNION ALL
	SELECT 4, format('sum(o_ol_cnt) <> count(order_line) in district %s/%s', o_w_id, o_d_id)
	FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) s FROM orders GROUP BY 1, 2) o
	JOIN (SELECT ol_w_id, ol_d_id, count(*) n FROM order_line GROUP BY 1, 2) l
		ON ol_w_id = o_w_id AND ol_d_id = o_d_id
	WHERE s <> n
$$;
