import { backendLabels } from '../backends/backend-ids.js';
import type { ContenderResult } from './bench-result.js';

/** One panel of the chart: a metric on a log axis. */
interface Panel {
  readonly title: string;
  readonly hint: string;
  readonly unit: string;
  readonly value: (result: ContenderResult) => number | undefined;
  /** A second mark (a tick), e.g. p99 beside a p50 bar. */
  readonly tick?: (result: ContenderResult) => number | undefined;
}

const panels: readonly Panel[] = [
  {
    title: 'Uncontended acquire + release',
    hint: 'per second · higher is better',
    unit: '/s',
    value: (result) => result.uncontended,
  },
  {
    title: 'Two-client handoff',
    hint: 'ms · bar p50, tick p99 · lower is better',
    unit: 'ms',
    value: (result) => result.handoff?.p50,
    tick: (result) => result.handoff?.p99,
  },
  {
    title: '8 workers on one lock',
    hint: 'critical sections/s · higher is better',
    unit: '/s',
    value: (result) => result.workers?.perSecond,
  },
];

const colors = {
  lockkit: '#2563eb',
  peer: '#a1a1aa',
  tick: '#18181b',
  grid: '#e4e4e7',
  text: '#18181b',
  muted: '#71717a',
  band: '#f4f4f5',
};

const layout = {
  labelWidth: 300,
  panelWidth: 250,
  valueWidth: 56,
  gap: 24,
  top: 124,
  rowHeight: 19,
  groupHeight: 22,
  barHeight: 11,
  bottom: 40,
};

/** Escapes text for SVG. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function format(value: number, unit: string): string {
  if (unit === 'ms') return value < 10 ? value.toFixed(2) : value.toFixed(0);
  return value >= 10_000 ? `${(value / 1000).toFixed(1)}k` : Math.round(value).toString();
}

function finite(values: readonly (number | undefined)[]): number[] {
  return values.filter(
    (value): value is number => value !== undefined && Number.isFinite(value) && value > 0,
  );
}

/** A log10 axis over the decades that hold `values`. */
function logAxis(values: readonly number[]): { min: number; max: number; decades: number[] } {
  const low = Math.floor(Math.log10(Math.min(...values, 1e9)));
  const high = Math.ceil(Math.log10(Math.max(...values, 1e-9)));
  const min = Number.isFinite(low) ? low : 0;
  const max = Number.isFinite(high) && high > min ? high : min + 1;
  return { min, max, decades: Array.from({ length: max - min + 1 }, (_, index) => min + index) };
}

/**
 * The bench chart as standalone SVG: one row per contender, grouped by backend, and three
 * panels (uncontended throughput, handoff latency, 8-worker throughput) on log axes, lockkit
 * in blue and the peers in grey, every bar labelled with its value.
 */
export function benchChart(
  results: readonly ContenderResult[],
  title: string,
  subtitle: string,
): string {
  const rows: { y: number; result?: ContenderResult; group?: string }[] = [];
  let y = layout.top;
  let previous: string | undefined;
  for (const result of results) {
    if (result.backend !== previous) {
      rows.push({ y, group: backendLabels[result.backend] });
      y += layout.groupHeight;
      previous = result.backend;
    }
    rows.push({ y, result });
    y += layout.rowHeight;
  }
  const plotBottom = y + 4;
  const width =
    layout.labelWidth + panels.length * (layout.panelWidth + layout.valueWidth + layout.gap);
  const height = plotBottom + layout.bottom;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="${colors.text}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="28" font-size="18" font-weight="600">${escapeXml(title)}</text>`,
    `<text x="16" y="48" fill="${colors.muted}">${escapeXml(subtitle)}</text>`,
    `<rect x="16" y="62" width="12" height="12" fill="${colors.lockkit}"/><text x="34" y="72">lockkit</text>`,
    `<rect x="96" y="62" width="12" height="12" fill="${colors.peer}"/><text x="114" y="72">peer library or raw client calls</text>`,
    `<text x="330" y="72" fill="${colors.muted}">log scales · loopback, clients and servers share the CPUs · the figures are noisy: compare rows within a backend</text>`,
  ];
  // Group bands and labels.
  for (const row of rows) {
    if (row.group !== undefined) {
      parts.push(
        `<rect x="0" y="${row.y}" width="${width}" height="${layout.groupHeight}" fill="${colors.band}"/>`,
        `<text x="16" y="${row.y + 15}" font-weight="600">${escapeXml(row.group)}</text>`,
      );
    } else if (row.result) {
      const weight = row.result.lockkit ? ' font-weight="600"' : '';
      parts.push(`<text x="28" y="${row.y + 13}"${weight}>${escapeXml(row.result.library)}</text>`);
    }
  }
  for (const [index, panel] of panels.entries()) {
    const left = layout.labelWidth + index * (layout.panelWidth + layout.valueWidth + layout.gap);
    const values = finite(results.flatMap((result) => [panel.value(result), panel.tick?.(result)]));
    const axis = logAxis(values);
    const x = (value: number): number =>
      left + ((Math.log10(value) - axis.min) / (axis.max - axis.min)) * layout.panelWidth;
    parts.push(
      `<text x="${left}" y="${layout.top - 22}" font-weight="600">${escapeXml(panel.title)}</text>`,
      `<text x="${left}" y="${layout.top - 8}" fill="${colors.muted}" font-size="11">${escapeXml(panel.hint)}</text>`,
    );
    for (const decade of axis.decades) {
      const gridX = x(10 ** decade).toFixed(1);
      const label = decade >= 3 ? `${10 ** (decade - 3)}k` : String(10 ** decade);
      parts.push(
        `<line x1="${gridX}" y1="${layout.top}" x2="${gridX}" y2="${plotBottom}" stroke="${colors.grid}"/>`,
        `<text x="${gridX}" y="${plotBottom + 16}" text-anchor="middle" fill="${colors.muted}" font-size="11">${label}</text>`,
      );
    }
    parts.push(
      `<text x="${left + layout.panelWidth / 2}" y="${plotBottom + 32}" text-anchor="middle" fill="${colors.muted}" font-size="11">${escapeXml(panel.unit)}</text>`,
    );
    for (const row of rows) {
      const result = row.result;
      if (!result) continue;
      const value = panel.value(result);
      const barY = row.y + (layout.rowHeight - layout.barHeight) / 2;
      if (value === undefined || !Number.isFinite(value) || value <= 0) {
        parts.push(`<text x="${left + 4}" y="${row.y + 13}" fill="${colors.muted}">—</text>`);
        continue;
      }
      const end = Math.max(left + 1, x(value));
      const fill = result.lockkit ? colors.lockkit : colors.peer;
      parts.push(
        `<rect x="${left}" y="${barY.toFixed(1)}" width="${(end - left).toFixed(1)}" height="${layout.barHeight}" rx="2" fill="${fill}"><title>${escapeXml(`${result.library}: ${format(value, panel.unit)} ${panel.unit}`)}</title></rect>`,
      );
      let labelX = end + 4;
      const tick = panel.tick?.(result);
      if (tick !== undefined && Number.isFinite(tick) && tick > 0) {
        const tickX = x(tick);
        parts.push(
          `<line x1="${end.toFixed(1)}" y1="${(barY + layout.barHeight / 2).toFixed(1)}" x2="${tickX.toFixed(1)}" y2="${(barY + layout.barHeight / 2).toFixed(1)}" stroke="${colors.tick}" stroke-width="1"/>`,
          `<line x1="${tickX.toFixed(1)}" y1="${(barY - 1).toFixed(1)}" x2="${tickX.toFixed(1)}" y2="${(barY + layout.barHeight + 1).toFixed(1)}" stroke="${colors.tick}" stroke-width="2"/>`,
        );
        labelX = Math.max(labelX, tickX + 4);
      }
      const text =
        tick !== undefined && Number.isFinite(tick)
          ? `${format(value, panel.unit)} / ${format(tick, panel.unit)}`
          : format(value, panel.unit);
      parts.push(
        `<text x="${labelX.toFixed(1)}" y="${row.y + 13}" font-size="11"${result.lockkit ? ' font-weight="600"' : ''}>${escapeXml(text)}</text>`,
      );
    }
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
