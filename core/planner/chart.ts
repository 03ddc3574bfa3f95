/**
 * The plan's chart: every planned candidate as tokens/s per device against
 * tokens/s per user (the axes AIConfigurator's Pareto plots use), colour by
 * device type, shape by topology, with the Pareto front drawn through its
 * members. A Vega-Lite specification; core/report/svg.ts renders it.
 *
 * @module
 */
import type { PlanResult } from "./planner.ts";
import type { VegaLiteSpec } from "../report/svg.ts";

/**
 * The Vega-Lite specification of a plan's Pareto chart.
 *
 * @param r the plan
 */
export function planChartSpec(r: PlanResult): VegaLiteSpec {
  const points = r.ranked.map((c, i) => ({
    candidate: `${i === 0 ? "winner: " : ""}${c.device.replace(/_.*$/, "")} tp${c.tp} ${
      c.topology === "disagg" ? `${c.prefill}P+${c.decode}D` : `× ${c.instances}`
    }`,
    device: c.device,
    topology: c.topology,
    tokensPerUser: Number(c.tokensPerUser.toFixed(3)),
    tokensPerDevice: Number(c.tokensPerDevice.toFixed(3)),
    pareto: c.pareto,
    winner: i === 0,
  }));
  const x = { field: "tokensPerUser", type: "quantitative", title: "output rate per user, 1 / median TPOT (tok/s)" };
  const y = { field: "tokensPerDevice", type: "quantitative", title: "output rate per device (tok/s)" };
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: `Deployments meeting the SLOs at ${r.request.targetRate} req/s`,
    width: 520,
    height: 320,
    data: { values: points },
    layer: [
      {
        transform: [{ filter: "datum.pareto" }],
        mark: { type: "line", color: "#888", strokeDash: [4, 3] },
        encoding: { x: { ...x, sort: "ascending" }, y },
      },
      {
        mark: { type: "point", filled: true, size: 80 },
        encoding: {
          x,
          y,
          color: { field: "device", type: "nominal", title: "device", legend: { labelLimit: 0 } },
          shape: { field: "topology", type: "nominal", title: "topology" },
        },
      },
      // The winner ringed, and the front's points (the winner among them or not) labelled with what they are.
      {
        transform: [{ filter: "datum.winner" }],
        mark: { type: "point", size: 360, strokeWidth: 2, color: "#c0392b", filled: false },
        encoding: { x, y },
      },
      {
        transform: [{ filter: "datum.pareto || datum.winner" }],
        mark: { type: "text", align: "left", dx: 9, dy: -7, fontSize: 10, limit: 0 },
        encoding: { x, y, text: { field: "candidate" } },
      },
    ],
  };
}
