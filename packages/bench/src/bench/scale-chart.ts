import { backendIds, backendLabels } from '../backends/backend-ids.js';
import { escapeXml } from './bench-chart.js';
import type { HeldPoint } from './measure-held-curve.js';
import type { ScaleResult } from './scale-result.js';

/** One panel: a metric of the held-locks curve against the count held (both log axes). */
interface CurvePanel {
  readonly title: string;
  readonly hint: string;
  readonly value: (point: HeldPoint) => number | undefined;
}

const panels: readonly CurvePanel[] = [
  {
    title: 'One more acquire + release',
    hint: 'ms, p50, while N locks are held · lower is better',
    value: (point) => point.probeP50Ms,
  },
  {
    title: 'Taking the locks',
    hint: 'locks/s (500 at a time) · higher is better',
    value: (point) => point.acquirePerSecond,
  },
  {
    title: 'Client heap per held lock',
    hint: 'bytes (after a forced GC) · lower is better',
    value: (point) => point.heapPerLock,
  },
];

/** Line colours per backend, in the bench's backend order (`backendIds`). */
const palette = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];
const size = { panel: 300, plot: 200, gap: 56, left: 56, top: 110, bottom: 48 };

/** A log10 axis covering `values` (whole decades). */
export function decadeRange(values: readonly number[]): { min: number; max: number } {
  const usable = values.filter((value) => Number.isFinite(value) && value > 0);
  if (usable.length === 0) return { min: 0, max: 1 };
  const min = Math.floor(Math.log10(Math.min(...usable)));
  const max = Math.ceil(Math.log10(Math.max(...usable)));
  return { min, max: max > min ? max : min + 1 };
}

function legendLabel(result: ScaleResult): string {
  return `${result.library}, ${backendLabels[result.backend]}`;
}

/** The backend's colour; solid for lockkit's defaults, dashed with options, dotted for raw. */
function lineStyle(result: ScaleResult): { color: string; dash: string } {
  const index = Math.max(0, (backendIds as readonly string[]).indexOf(result.backend));
  const color = palette[index % palette.length] ?? '#4b5563';
  if (!result.lockkit) return { color, dash: ' stroke-dasharray="2 3"' };
  return { color, dash: result.library === 'lockkit' ? '' : ' stroke-dasharray="7 4"' };
}

function label(decade: number): string {
  if (decade >= 6) return `${10 ** (decade - 6)}M`;
  if (decade >= 3) return `${10 ** (decade - 3)}k`;
  return String(10 ** decade);
}

/**
 * The held-locks cost curve as standalone SVG: per panel one line per row of `results` with a
 * curve, the count held on the x axis; each point labelled with its value. A backend has one
 * colour: lockkit's defaults solid, lockkit with options dashed, the raw client dotted.
 */
export function scaleChart(
  results: readonly ScaleResult[],
  title: string,
  subtitle: string,
): string {
  const lines = results.filter((result) => result.held.length > 0);
  const width = size.left + panels.length * (size.panel + size.gap);
  const height = size.top + size.plot + size.bottom + 22 * Math.ceil(lines.length / 3);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="#18181b">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="28" font-size="18" font-weight="600">${escapeXml(title)}</text>`,
    `<text x="16" y="48" fill="#71717a">${escapeXml(subtitle)}</text>`,
  ];
  const counts = lines.flatMap((result) => result.held.map((point) => point.held));
  const xAxis = decadeRange(counts);
  for (const [index, panel] of panels.entries()) {
    const left = size.left + index * (size.panel + size.gap);
    const values = lines.flatMap((result) => result.held.map((point) => panel.value(point) ?? 0));
    const yAxis = decadeRange(values);
    const x = (count: number): number =>
      left + ((Math.log10(count) - xAxis.min) / (xAxis.max - xAxis.min)) * size.panel;
    const y = (value: number): number =>
      size.top +
      size.plot -
      ((Math.log10(value) - yAxis.min) / (yAxis.max - yAxis.min)) * size.plot;
    parts.push(
      `<text x="${left}" y="${size.top - 28}" font-weight="600">${escapeXml(panel.title)}</text>`,
      `<text x="${left}" y="${size.top - 12}" fill="#71717a" font-size="11">${escapeXml(panel.hint)}</text>`,
    );
    for (let decade = yAxis.min; decade <= yAxis.max; decade++) {
      const at = y(10 ** decade).toFixed(1);
      parts.push(
        `<line x1="${left}" y1="${at}" x2="${left + size.panel}" y2="${at}" stroke="#e4e4e7"/>`,
        `<text x="${left - 6}" y="${at}" text-anchor="end" dominant-baseline="middle" fill="#71717a" font-size="11">${label(decade)}</text>`,
      );
    }
    for (let decade = xAxis.min; decade <= xAxis.max; decade++) {
      const at = x(10 ** decade).toFixed(1);
      parts.push(
        `<line x1="${at}" y1="${size.top}" x2="${at}" y2="${size.top + size.plot}" stroke="#e4e4e7"/>`,
        `<text x="${at}" y="${size.top + size.plot + 16}" text-anchor="middle" fill="#71717a" font-size="11">${label(decade)}</text>`,
      );
    }
    parts.push(
      `<text x="${left + size.panel / 2}" y="${size.top + size.plot + 32}" text-anchor="middle" fill="#71717a" font-size="11">locks held</text>`,
    );
    for (const result of lines) {
      const { color, dash } = lineStyle(result);
      const points = result.held
        .map((point) => [point.held, panel.value(point)] as const)
        .filter((pair): pair is readonly [number, number] => pair[1] !== undefined && pair[1] > 0);
      if (points.length === 0) continue;
      const path = points.map(([count, value]) => `${x(count).toFixed(1)},${y(value).toFixed(1)}`);
      parts.push(
        `<polyline points="${path.join(' ')}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`,
      );
      for (const [count, value] of points) {
        const shown = value >= 100 ? Math.round(value).toString() : value.toPrecision(2);
        parts.push(
          `<circle cx="${x(count).toFixed(1)}" cy="${y(value).toFixed(1)}" r="3" fill="${color}"><title>${escapeXml(`${legendLabel(result)}, ${count} held: ${shown}`)}</title></circle>`,
        );
      }
    }
  }
  const legendTop = size.top + size.plot + 56;
  for (const [line, result] of lines.entries()) {
    const lx = 16 + (line % 3) * 360;
    const ly = legendTop + Math.floor(line / 3) * 22;
    const { color, dash } = lineStyle(result);
    parts.push(
      `<line x1="${lx}" y1="${ly - 4}" x2="${lx + 24}" y2="${ly - 4}" stroke="${color}" stroke-width="3"${dash}/>`,
      `<text x="${lx + 30}" y="${ly}">${escapeXml(legendLabel(result))}</text>`,
    );
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
