// Global name generators: index -> text. A project's key universe is a seeded subset of these
// indices; burst keys use indices from BURST_BASE on (one-off URLs, literal SQL, scanner IPs).

export const BURST_BASE = 100_000;
/** Burst keys are numbered 0 .. MAX_BURST_KEYS - 1 (scanner IPs live in one /16). */
export const MAX_BURST_KEYS = 65_536;

const AREAS = ["account", "sales", "product", "order", "member", "board", "payment", "admin"];
const VERBS = ["save", "delete", "list", "view", "update", "search"];
const NOUNS = ["employee", "dept", "unit", "item", "user", "invoice", "cart", "report", "notice", "coupon"];
const CITIES = ["seoul", "pusan", "daegu", "kwangju", "daejun", "incheon", "ulsan", "jeju"];

function radix(i: number, ...lists: readonly (readonly string[])[]): string[] {
  const out: string[] = [];
  let rest = i;
  for (const list of lists) {
    out.push(list[rest % list.length]!);
    rest = Math.floor(rest / list.length);
  }
  return out;
}

/** Service URL patterns, like "/account/save/employee/kwangju". */
export const SERVICE_COUNT = AREAS.length * VERBS.length * NOUNS.length * CITIES.length;
export function serviceName(i: number): string {
  if (i >= BURST_BASE) return `/p/item/${i - BURST_BASE}`;
  return `/${radix(i, AREAS, VERBS, NOUNS, CITIES).join("/")}`;
}

const TABLES = ["emp", "dept", "item", "orders", "order_line", "member", "coupon", "invoice", "cart", "board", "notice", "stock"];
const COLUMNS = ["id", "name", "status", "owner_id", "created_at", "dept_id", "price", "qty"];
const SQL_TEMPLATES: readonly [string, number, string][] = [
  ["select * from {t} where {c}=#", 1, "R"],
  ["select count(*) from {t} where {c} like #", 1, "R"],
  ["update {t} set {c}=# where id=#", 3, "U"],
  ["insert into {t}(id,{c}) values(#,#)", 2, "C"],
  ["delete from {t} where {c}=#", 4, "D"],
  ["select a.*, b.{c} from {t} a join dept b on a.dept_id=b.id where a.id=#", 1, "R"],
];
export const SQL_COUNT = SQL_TEMPLATES.length * TABLES.length * COLUMNS.length;

/** SQL text (literals masked with '#', as the agent does), sql_crud code 0-4 and crud letter. */
export function sqlStatement(i: number): { sql: string; crud: number; crudMetrics: string } {
  if (i >= BURST_BASE) return { sql: `select * from item where id=${i - BURST_BASE}`, crud: 1, crudMetrics: "R" };
  const t = SQL_TEMPLATES[i % SQL_TEMPLATES.length]!;
  const [table, column] = radix(Math.floor(i / SQL_TEMPLATES.length), TABLES, COLUMNS);
  return { sql: t[0].replace("{t}", table!).replace("{c}", column!), crud: t[1], crudMetrics: t[2] };
}

export const DATABASES = [
  "jdbc:mysql://localhost:3306,localhost:3310/fake",
  "jdbc:postgresql://pg-main:5432/orders",
  "jdbc:oracle:thin:@ora-prod:1521/XE",
  "jdbc:mysql://mysql-ro:3306/catalog",
  "jdbc:sqlserver://mssql:1433;databaseName=erp",
  "jdbc:mariadb://maria:3306/board",
];

/** Outbound hosts; the port belongs to the host. The last one is the burst target. */
export const HOSTS: readonly (readonly [string, number])[] = [
  ["127.0.0.1", 10002],
  ["127.0.0.1", 10007],
  ["api.partner.example", 443],
  ["payment-gw.internal", 8443],
  ["auth.internal", 8080],
  ["search.internal", 9200],
  ["10.0.3.21", 80],
  ["mail.internal", 8025],
];
export const BURST_HOST = HOSTS.length;
export function host(i: number): readonly [string, number] {
  return i === BURST_HOST ? ["cache.internal", 6380] : HOSTS[i]!;
}

export const REMOTE_URL_COUNT = AREAS.length * VERBS.length * NOUNS.length;
export function remoteUrl(i: number): string {
  if (i >= BURST_BASE) return `/cache/item/${i - BURST_BASE}`;
  return `/remote/${radix(i, AREAS, VERBS, NOUNS).join("/")}`;
}

const EXCEPTIONS = [
  "java.sql.SQLException",
  "java.lang.NullPointerException",
  "java.net.SocketTimeoutException",
  "java.io.IOException",
  "java.lang.IllegalStateException",
  "java.lang.IllegalArgumentException",
  "org.springframework.dao.DataAccessException",
  "javax.servlet.ServletException",
  "java.util.ConcurrentModificationException",
  "com.example.shop.ItemNotFoundException",
];
export const EXCEPTION_COUNT = EXCEPTIONS.length;
export const BURST_EXCEPTION = EXCEPTIONS.length - 1;
export function exceptionClass(i: number): string {
  return `${EXCEPTIONS[i]!}(0)`;
}

const MESSAGES = ["Sql Exception", "Read timed out", "Connection reset", "Deadlock found", "Invalid state", "Unexpected value", "Closed"];
export const MESSAGE_COUNT = MESSAGES.length * NOUNS.length;
export function exceptionMessage(i: number): string {
  if (i >= BURST_BASE) return `Item ${i - BURST_BASE} not found`;
  const [m, noun] = radix(i, MESSAGES, NOUNS);
  return `${m}: ${noun}`;
}

const GEO: readonly (readonly [string, string, readonly string[]])[] = [
  ["KR", "KOREA", ["Seoul", "Busan", "Incheon"]],
  ["US", "UNITED STATES", ["Ashburn", "San Jose", "Chicago"]],
  ["CA", "CANADA", ["Winnipeg", "Toronto"]],
  ["JP", "JAPAN", ["Tokyo", "Osaka"]],
  ["DE", "GERMANY", ["Frankfurt am Main", "Berlin"]],
  ["GB", "UNITED KINGDOM", ["London"]],
  ["BR", "BRAZIL", ["Sao Paulo"]],
  ["IN", "INDIA", ["Mumbai", "Bengaluru"]],
  ["FR", "FRANCE", ["Paris"]],
  ["AU", "AUSTRALIA", ["Sydney"]],
];

/** Country as the API prints it, "CA (CANADA)", and a city. */
export function geo(h: number): { country: string; city: string } {
  const [cc, name, cities] = GEO[h % GEO.length]!;
  return { country: `${cc} (${name})`, city: cities[Math.floor(h / GEO.length) % cities.length]! };
}

/** Scanner IPs of a burst: one per burst key, all in 198.18.0.0/16 (never used by regular clients). */
export function burstIp(n: number): string {
  return `198.18.${n >> 8}.${n & 255}`;
}
