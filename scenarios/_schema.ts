/**
 * The JSON Schema of scenario files, as text: zod's export of the validator,
 * with the metric names written into it.
 *
 * The validator checks metric names itself (with located "did you mean"
 * errors), so zod sees assertion blocks as plain mappings. The export then
 * names the metrics wherever a scenario names one, so that editors complete
 * them and flag a misspelled one:
 *
 * - every assertion block (a top-level mapping whose key is `expect`,
 *   `expect_*` or `*_meeting`): `properties` for each metric in its
 *   canonical short spelling, with its meaning and unit, and `propertyNames`
 *   accepting every spelling {@link resolveMetric} accepts, in any case;
 *   `expect` also accepts `<variant>.<metric>` and the metrics derived from
 *   a sweep (the `*_meeting` blocks);
 * - `baseline.tolerances` keys (metrics and derived metrics);
 * - `measured[].metric`.
 *
 * @module
 */
import { z } from "zod";
import { METRIC_KEY_NAMES, resolveMetric, ScenarioFileSchema } from "../core/scenario/mod.ts";
import type { MetricRef } from "../core/scenario/mod.ts";

/** A JSON Schema node. */
type Node = Record<string, unknown>;

/** Top-level keys of assertion blocks (metric: bound). */
const ASSERTION_BLOCK = /^expect(_\w+)?$|_meeting$/;
/** Top-level keys of blocks whose result is a derived metric (`max_rate_meeting`). */
const DERIVED_BLOCK = /_meeting$/;
/** The assertion block whose metrics may name a variant and the derived metrics. */
const EXPECT = "expect";

/** Statistic spellings resolveMetric accepts beside those METRIC_KEY_NAMES lists (used only while it does). */
const STAT_ALIASES = ["avg", "p999"];

/** What each column measures, by canonical name. */
const COLUMN_MEANING: Record<string, string> = {
  "TTFT_FROM_ARRIVAL(s)": "TTFT from the request's arrival, as the user sees it (the client's wait included)",
  "E2E_FROM_ARRIVAL(s)": "End-to-end latency from the request's arrival, as the user sees it",
  "TPOT(s)": "Time per output token after the first, per request",
  "ITL(s)": "Inter-token latency, over all output tokens after the first",
  "CLIENT_WAIT(s)": "Time the client held a request under max_concurrency (send - arrival)",
  "TTFT(s)": "TTFT from the client's send, as vLLM's and SGLang's benchmarks report it",
  "E2E_TIME(s)": "End-to-end latency from the client's send, as vLLM's and SGLang's benchmarks report it",
  "INPUT_TOKENS": "Prompt tokens per request",
  "OUTPUT_TOKENS": "Output tokens per request",
  "OUTPUT_TOKEN_THROUGHPUT(tok/s)": "Output tokens per second of a request's decode (E2E - TTFT)",
};

/** What each statistic is. */
const STATISTIC_MEANING: Record<string, string> = {
  AVERAGE: "mean",
  MIN: "minimum",
  MAX: "maximum",
  MEDIAN: "median",
  P75: "75th percentile",
  P90: "90th percentile",
  P95: "95th percentile",
  P99: "99th percentile",
  "P99.9": "99.9th percentile",
};

/** What each run-level figure is, by canonical name. */
const FIGURE_MEANING: Record<string, string> = {
  "benchmark_duration(s)": "Last completion - first send",
  "total_requests": "Requests completed",
  "request_throughput(req/s)": "Completed requests / benchmark_duration",
  "total_input_tokens": "Prompt tokens of the completed requests",
  "input_token_throughput(tok/s)": "total_input_tokens / benchmark_duration",
  "total_output_tokens": "Output tokens of the completed requests",
  "output_token_throughput(tok/s)": "total_output_tokens / benchmark_duration",
  preemptions: "Preemptions, summed over requests",
  unservable_requests: "Requests that could never be served",
  simulated_seconds: "Simulated time of the last event",
  offered_rate: "Arrivals per second over the middle 80% of arrivals",
  achieved_rate:
    "Completions per second over the middle 80% of completions, or the lower rate the queue growth implies (offered / (1 + queue_growth))",
  keeps_up:
    "1 when the deployment keeps up with its offered load: neither its queues (the wait before the first token) nor its batch (the time to the last token) grows, no 95% interval of the growth over the later half of the arrivals above 0 while adding more than 10% of that time's own level (a run too short for the test: achieved within 5% of offered); else 0",
  queue_growth:
    "Growth of the wait before the first token (client and engine queues) over the later half of the arrivals, seconds per second (0 when steady)",
  goodput: "Requests per second that meet every per-request SLO (goodput:, or the latency bounds the assertions state)",
  slo_attainment: "Fraction of requests that meet every per-request SLO",
  batch_occupancy: "Mean sequences in a batch / max_num_seqs, over the run",
  kv_occupancy: "Mean KV blocks held by requests / KV blocks, over the run",
  kv_occupancy_peak: "Most KV blocks in use at once / KV blocks, on the fullest engine",
  mfu: "Model FLOPs utilization: FLOPs / peak FLOPs of all devices",
  mbu: "Memory bandwidth utilization: HBM bytes moved / peak bandwidth of all devices",
  prefix_hit_rate: "Prompt tokens found in the prefix cache / prompt tokens of the requests that looked",
  load_imbalance: "Requests the busiest engine served / the engines' mean (1: even)",
  host_hit_rate: "Prompt tokens loaded from the host KV tier / prompt tokens of the requests that looked (KV offload)",
};

const UNIT_TEXT: Record<MetricRef["unit"], string> = {
  s: "seconds (or 50ms)",
  "req/s": "req/s",
  "tok/s": "tok/s",
  tokens: "tokens",
  fraction: "a fraction (0.8 or 80%)",
  count: "a count",
};

/** An editor's description of a metric: what it is, its unit, which way is better, its canonical name. */
function describe(m: MetricRef): string {
  const dot = m.name.indexOf(".");
  const what = dot < 0
    ? FIGURE_MEANING[m.name] ?? m.name
    : `${COLUMN_MEANING[m.name.slice(0, dot)] ?? m.name.slice(0, dot)}, ${
      STATISTIC_MEANING[m.name.slice(dot + 1)] ?? m.name.slice(dot + 1)
    }`;
  const better = m.better === "none" ? "" : `, ${m.better} is better`;
  const gated = m.gated ? " An SLO on it holds only while the deployment keeps up." : "";
  return `${what}. In ${UNIT_TEXT[m.unit]}${better}.${gated} [${m.name}]`;
}

/** The spellings of metric names, lower case: `<column>.<statistic>` and names written alone. */
function spellings(): { columns: string[]; statistics: string[]; names: string[] } {
  const columns = new Set<string>(), statistics = new Set<string>(), names = new Set<string>();
  for (const n of METRIC_KEY_NAMES) {
    const dot = n.indexOf(".");
    if (dot < 0) names.add(n.toLowerCase());
    else {
      columns.add(n.slice(0, dot).toLowerCase());
      statistics.add(n.slice(dot + 1).toLowerCase());
    }
  }
  for (const a of STAT_ALIASES) if ([...columns].every((c) => resolveMetric(`${c}.${a}`))) statistics.add(a);
  // The pattern pairs every column with every statistic: each pair must be a metric.
  for (const c of columns) {
    for (const s of statistics) {
      if (!resolveMetric(`${c}.${s}`)) throw new Error(`schema: '${c}.${s}' would be accepted but is no metric`);
    }
  }
  return { columns: [...columns], statistics: [...statistics], names: [...names] };
}

/** A regular expression (ECMA-262, as JSON Schema's `pattern`) for `text` in any case. */
function anyCase(text: string): string {
  return [...text].map((c) =>
    c.toLowerCase() !== c.toUpperCase()
      ? `[${c.toLowerCase()}${c.toUpperCase()}]`
      : /[\^$\\.*+?()[\]{}|]/.test(c)
      ? `\\${c}`
      : c
  ).join("");
}

/** Alternatives for `names` in any case; `x` and `x(unit)` become `x(?:\(unit\))?`. */
function alternation(names: readonly string[]): string {
  const units = new Map<string, string[]>();
  const withUnit = (n: string) => {
    const m = /^(.+?)(\(.+\))$/.exec(n);
    return m && names.includes(m[1]) ? m : undefined;
  };
  for (const n of names) {
    const m = withUnit(n);
    if (m) units.set(m[1], [...(units.get(m[1]) ?? []), m[2]]);
  }
  return names.filter((n) => !withUnit(n)).map((n) =>
    units.has(n) ? `${anyCase(n)}(?:${units.get(n)!.map(anyCase).join("|")})?` : anyCase(n)
  ).join("|");
}

/** A metric name as resolveMetric reads it, without the anchors. */
function metricPattern(): string {
  const { columns, statistics, names } = spellings();
  return `(?:${alternation(columns)})\\.(?:${alternation(statistics)})|${alternation(names)}`;
}

/** The canonical short spelling of each metric (the first name METRIC_KEY_NAMES gives it) with its description. */
function metricProperties(): Record<string, Node> {
  const seen = new Set<string>();
  const out: Record<string, Node> = {};
  for (const n of METRIC_KEY_NAMES) {
    const m = resolveMetric(n)!;
    if (seen.has(m.name)) continue;
    seen.add(m.name);
    out[n] = { description: describe(m) };
  }
  return out;
}

/** What editors say of a name that is no metric (instead of the pattern). */
const UNKNOWN =
  "Unknown metric: <column>.<statistic> such as ttft.p99, or a figure such as goodput (docs/scenarios.md)";

const REF = (name: string) => ({ $ref: `#/$defs/${name}` });

/** The node a `$ref` names (`#/$defs/<name>`), or the node itself. */
function deref(root: Node, node: Node): Node {
  const ref = node.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/$defs/")) return node;
  return deref(root, (root.$defs as Record<string, Node>)[ref.slice("#/$defs/".length)]);
}

/** The schemas of property `name` under `node`, through `$ref`s and `anyOf`/`oneOf`/`allOf` branches. */
function propertiesNamed(root: Node, node: Node, name: string): Node[] {
  const n = deref(root, node);
  const own = (n.properties as Record<string, Node> | undefined)?.[name];
  const branches = ["anyOf", "oneOf", "allOf"].flatMap((k) => (n[k] as Node[] | undefined) ?? []);
  return [...(own ? [own] : []), ...branches.flatMap((b) => propertiesNamed(root, b, name))];
}

/** Whether a node is a plain mapping of name to value (a zod record): the shape of an assertion block. */
const isRecord = (n: Node) => n.type === "object" && n.properties === undefined && n.additionalProperties !== undefined;

/**
 * Names the metrics in a record's keys: `propertyNames` from `names`, the
 * metrics' descriptions for completion, and `derived` names (with their
 * descriptions) as properties of their own. Values keep their schema.
 */
function nameMetrics(root: Node, node: Node, names: Node[], derived: Record<string, string>): void {
  node.propertyNames = names.length === 1 ? names[0] : { anyOf: names };
  node.allOf = [REF("MetricProperties")];
  const value = deref(root, node).additionalProperties as Node;
  if (Object.keys(derived).length) {
    node.properties = Object.fromEntries(
      Object.entries(derived).map(([k, description]) => [k, { ...value, description }]),
    );
  }
}

/** Writes the metric names into zod's export of the scenario schema (see the module comment). */
function withMetricNames(root: Node): Node {
  const props = root.properties as Record<string, Node>;
  const metric = metricPattern();
  root.$defs = {
    ...(root.$defs as Record<string, Node>),
    MetricName: {
      type: "string",
      pattern: `^(?:${metric})$`,
      description: "A metric: <column>.<statistic> (ttft.p99), or an overall or run-level figure (goodput)",
      patternErrorMessage: UNKNOWN,
      examples: Object.keys(metricProperties()),
    },
    VariantMetricName: {
      type: "string",
      pattern: `^[^.]+\\.(?:${metric})$`,
      description: "A metric of a variant: <variant>.<metric> (disagg.tpot.p99)",
      patternErrorMessage: UNKNOWN,
    },
    MetricProperties: { properties: metricProperties() },
  };
  const derived: Record<string, string> = Object.fromEntries(
    Object.keys(props).filter((k) => DERIVED_BLOCK.test(k)).map((k) => [
      k,
      `Derived from the sweep (see ${k}): ${String(props[k].description ?? deref(root, props[k]).description ?? k)}`,
    ]),
  );
  const derivedName = Object.keys(derived).length ? [{ enum: Object.keys(derived) }] : [];
  for (const [key, node] of Object.entries(props)) {
    if (!ASSERTION_BLOCK.test(key) || !isRecord(deref(root, node))) continue;
    if (key === EXPECT) nameMetrics(root, node, [REF("MetricName"), REF("VariantMetricName"), ...derivedName], derived);
    else nameMetrics(root, node, [REF("MetricName")], {});
  }
  for (const node of props.baseline ? propertiesNamed(root, props.baseline, "tolerances") : []) {
    if (isRecord(deref(root, node))) nameMetrics(root, node, [REF("MetricName"), ...derivedName], derived);
  }
  const measured = props.measured ? deref(root, props.measured) : undefined;
  const item = measured?.items as Node | undefined;
  for (const node of item ? propertiesNamed(root, item, "metric") : []) Object.assign(node, REF("MetricName"));
  return root;
}

/**
 * The schema document (2-space JSON, trailing newline).
 *
 * @param file the zod schema of scenario files (another one in tests)
 */
export function scenarioJsonSchema(file: z.ZodType = ScenarioFileSchema): string {
  const schema = z.toJSONSchema(file, { unrepresentable: "any", io: "input", reused: "ref" });
  return JSON.stringify(
    {
      ...withMetricNames(schema as Node),
      $id: "https://servingcast.dev/scenario.schema.json",
      title: "ServingCast scenario",
      description: "A serving configuration with SLO assertions (docs/scenarios.md).",
    },
    null,
    2,
  ) + "\n";
}
