import assert from "node:assert/strict";
import { renderSvg } from "./svg.ts";

const chart = (points: { x: number; y: number }[], title = "t") => ({
  title,
  data: { values: points },
  mark: "point",
  encoding: { x: { field: "x", type: "quantitative" }, y: { field: "y", type: "quantitative" } },
});
const marks = (svg: string) => svg.match(/aria-roledescription="point"/g)?.length ?? 0;

Deno.test("charts of one shape share their parsed form, each drawn with its own data", async () => {
  const two = [{ x: 1, y: 2 }, { x: 2, y: 3 }];
  const three = [{ x: 1, y: 2 }, { x: 2, y: 3 }, { x: 30, y: 40 }];
  const a = await renderSvg(chart(two));
  const b = await renderSvg(chart(three));
  const again = await renderSvg(chart(two));
  assert.equal(marks(a), 2);
  assert.equal(marks(b), 3);
  assert.equal(again, a, "the data of the chart drawn before leaves nothing behind");
  assert.match(b, />30</, "the axis follows the new data");
  assert.doesNotMatch(a, />30</);
  // Another shape (a title differs) is parsed on its own.
  assert.match(await renderSvg(chart(two, "other")), />other</);
});
