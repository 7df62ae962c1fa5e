-- Time partitions (DESIGN.md section 3, "A warehouse for years of history"): every windowed fact table
-- becomes range-partitioned by calendar month (UTC) on its time column, in place. drizzle-kit cannot
-- declare a partitioned table, so this migration is written by hand (`drizzle-kit generate --custom`);
-- the columns stay those of the drizzle schema, and the list below is the declaration of
-- src/db/schema (partitionedByMonth) as it stands at this migration; a test compares the two.
--
-- Per table, in the migration's one transaction: a partitioned twin LIKE the table (defaults, CHECK
-- and NOT NULL constraints, storage, column comments), a partition for every month its rows span,
-- the rows moved, the old table dropped and the twin renamed, then the old table's keys and indexes
-- and its grants made again (keys and indexes after the move: one index build instead of an update
-- per row). The views that read the tables (0001's and any a user made on them, also views of those
-- views) are saved first with their options and grants, dropped, and made again over the new tables,
-- in their order of creation, under the same names: same names and columns for every reader.
-- A warehouse already partitioned is left alone. Partition names: <table>_pYYYY_MM, as
-- src/db/partitionName.ts makes them, bounds [month start, next month start) in UTC.
--
-- Grants of a table or view made again on its replacement (its owner's own are implied).
CREATE FUNCTION pg_temp.apm_regrant(target text, acl text, owner oid) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
  g record;
BEGIN
  IF acl IS NULL THEN
    RETURN; -- the default: its owner's only
  END IF;
  FOR g IN SELECT a.privilege_type, a.grantee, a.is_grantable FROM aclexplode(acl::aclitem[]) a WHERE a.grantee <> owner LOOP
    EXECUTE format('GRANT %s ON %s TO %s%s', g.privilege_type, target,
      CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END,
      CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
  END LOOP;
END $f$;
--> statement-breakpoint
DO $$
DECLARE
  spec record;
  saved record;
  month timestamptz;
  acl_of_table text;
  owner_of_table oid;
  tables text[] := ARRAY[]::text[];
  views_saved jsonb := '[]'::jsonb;
  keys text[];
  key text;
BEGIN
  CREATE TEMP TABLE apm_partitioned (name text, col text) ON COMMIT DROP;
  INSERT INTO apm_partitioned VALUES
    ('heap_use', 'window_start'), ('range_exceptions', 'window_start'), ('range_httpc', 'window_start'),
    ('range_httpc_by_service', 'window_start'), ('range_remote', 'window_start'), ('range_sql', 'window_start'),
    ('range_transactions', 'window_start'), ('stat_error', 'window_start'), ('stat_httpc', 'window_start'),
    ('stat_remote', 'window_start'), ('stat_sql', 'window_start'), ('stat_transaction', 'window_start'),
    ('tx_calls', 'window_start'), ('metric_points', 'ts'), ('visitors', 'ts'), ('events', 'event_time');
  DELETE FROM apm_partitioned p WHERE (SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(quote_ident(p.name))) IS DISTINCT FROM 'r';
  SELECT coalesce(array_agg(quote_ident(name)), ARRAY[]::text[]) INTO tables FROM apm_partitioned;
  IF cardinality(tables) = 0 THEN
    RETURN;
  END IF;

  -- Every view reading the tables, directly or through another view, oldest first.
  WITH RECURSIVE dependent(oid) AS (
    SELECT r.ev_class FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
    WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
      AND d.refobjid IN (SELECT to_regclass(t) FROM unnest(tables) t) AND r.ev_class <> d.refobjid
    UNION
    SELECT r.ev_class FROM dependent v JOIN pg_depend d ON d.refobjid = v.oid AND d.classid = 'pg_rewrite'::regclass
    JOIN pg_rewrite r ON r.oid = d.objid WHERE r.ev_class <> d.refobjid
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object(
      'name', format('%I.%I', n.nspname, c.relname), 'kind', c.relkind, 'def', pg_get_viewdef(c.oid),
      'options', array_to_string(c.reloptions, ', '), 'acl', c.relacl::text, 'owner', c.relowner) ORDER BY c.oid), '[]'::jsonb)
  INTO views_saved
  FROM (SELECT DISTINCT oid FROM dependent) v JOIN pg_class c ON c.oid = v.oid JOIN pg_namespace n ON n.oid = c.relnamespace;
  FOR saved IN SELECT value FROM jsonb_array_elements(views_saved) WITH ORDINALITY AS e(value, i) ORDER BY i DESC LOOP
    EXECUTE format('DROP %s %s', CASE saved.value->>'kind' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END, saved.value->>'name');
  END LOOP;

  FOR spec IN SELECT name, col FROM apm_partitioned ORDER BY name LOOP
    EXECUTE format(
      'CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS) PARTITION BY RANGE (%I)',
      spec.name || '__partitioned', spec.name, spec.col);
    FOR month IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', %I, ''UTC'') FROM %I', spec.col, spec.name) LOOP
      -- Month arithmetic in UTC: in the session's zone a month can gain or lose an hour (DST).
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        spec.name || '_p' || to_char(month AT TIME ZONE 'UTC', 'YYYY_MM'), spec.name || '__partitioned',
        to_char(month AT TIME ZONE 'UTC', 'YYYY-MM-DD"T00:00:00Z"'),
        to_char((month AT TIME ZONE 'UTC') + interval '1 month', 'YYYY-MM-DD"T00:00:00Z"'));
    END LOOP;
    EXECUTE format('INSERT INTO %I SELECT * FROM %I', spec.name || '__partitioned', spec.name);

    -- Keys and indexes as the old table had them, by name (a key without the partition column fails here, loudly).
    SELECT array_agg(stmt ORDER BY ord) INTO keys FROM (
      SELECT 0 AS ord, format('ALTER TABLE %I ADD CONSTRAINT %I %s', spec.name, k.conname, pg_get_constraintdef(k.oid)) AS stmt
      FROM pg_constraint k WHERE k.conrelid = to_regclass(quote_ident(spec.name)) AND k.contype IN ('p', 'u')
      UNION ALL
      SELECT 1, pg_get_indexdef(i.indexrelid)
      FROM pg_index i WHERE i.indrelid = to_regclass(quote_ident(spec.name))
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
    ) s;
    SELECT c.relacl::text, c.relowner INTO acl_of_table, owner_of_table FROM pg_class c WHERE c.oid = to_regclass(quote_ident(spec.name));
    EXECUTE format('DROP TABLE %I', spec.name);
    EXECUTE format('ALTER TABLE %I RENAME TO %I', spec.name || '__partitioned', spec.name);
    FOREACH key IN ARRAY coalesce(keys, ARRAY[]::text[]) LOOP
      EXECUTE key;
    END LOOP;
    PERFORM pg_temp.apm_regrant(quote_ident(spec.name), acl_of_table, owner_of_table);
    EXECUTE format('ANALYZE %I', spec.name);
  END LOOP;

  FOR saved IN SELECT value FROM jsonb_array_elements(views_saved) WITH ORDINALITY AS e(value, i) ORDER BY i LOOP
    EXECUTE format('CREATE %s %s%s AS %s',
      CASE saved.value->>'kind' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'VIEW' END, saved.value->>'name',
      CASE WHEN coalesce(saved.value->>'options', '') = '' THEN '' ELSE format(' WITH (%s)', saved.value->>'options') END,
      rtrim(saved.value->>'def', ';'));
    PERFORM pg_temp.apm_regrant(saved.value->>'name', saved.value->>'acl', (saved.value->>'owner')::oid);
  END LOOP;
END $$;
--> statement-breakpoint
DROP FUNCTION pg_temp.apm_regrant(text, text, oid);
