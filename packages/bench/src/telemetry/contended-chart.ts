import { escapeXml } from '../bench/bench-chart.js';
import type { Sample } from './contended-run.js';

const colors = {
  p50: '#1e3a8a',
  p90: '#2563eb',
  p99: '#f59e0b',
  granted: '#2563eb',
  timedOut: '#dc2626',
  grid: '#e4e4e7',
  text: '#18181b',
  muted: '#71717a',
  bands: ['#ffffff', '#f4f4f5'],
};

const layout = { width: 920, left: 72, right: 24, waitTop: 112, waitHeight: 230, gap: 56 };
const rateHeight = 110;

/** A polyline through the finite points; a NaN breaks it into pieces. */
function polylines(points: readonly (readonly [number, number])[], color: string): string[] {
  const pieces: string[][] = [[]];
  for (const [x, y] of points) {
    if (Number.isFinite(y)) pieces.at(-1)?.push(`${x.toFixed(1)},${y.toFixed(1)}`);
    else if ((pieces.at(-1)?.length ?? 0) > 0) pieces.push([]);
  }
  return pieces
    .filter((piece) => piece.length > 0)
    .map((piece) =>
      piece.length === 1
        ? `<circle cx="${piece[0]?.split(',')[0]}" cy="${piece[0]?.split(',')[1]}" r="2" fill="${color}"/>`
        : `<polyline points="${piece.join(' ')}" fill="none" stroke="${color}" stroke-width="2" stroke-linejoin="round"/>`,
    );
}

/**
 * The contended-lock chart as standalone SVG: wait-time percentiles per second on a log axis
 * (top), acquires per second by outcome (bottom), with the number of contending workers as
 * bands behind both.
 */
export function contendedChart(
  samples: readonly Sample[],
  title: string,
  subtitle: string,
): string {
  const plotWidth = layout.width - layout.left - layout.right;
  const seconds = samples.at(-1)?.second ?? 1;
  const x = (second: number): number => layout.left + (second / seconds) * plotWidth;
  const waits = samples.flatMap((sample) => [sample.p50, sample.p90, sample.p99]);
  const finiteWaits = waits.filter((value) => Number.isFinite(value) && value > 0);
  const low = Math.floor(Math.log10(Math.min(...finiteWaits, 1)));
  const high = Math.max(low + 1, Math.ceil(Math.log10(Math.max(...finiteWaits, 1))));
  const waitBottom = layout.waitTop + layout.waitHeight;
  const waitY = (ms: number): number =>
    ms > 0 ? waitBottom - ((Math.log10(ms) - low) / (high - low)) * layout.waitHeight : Number.NaN;
  const rateTop = waitBottom + layout.gap;
  const rateBottom = rateTop + rateHeight;
  const peakRate = Math.max(1, ...samples.map((sample) => sample.granted + sample.timedOut));
  const rateScale = 10 ** Math.floor(Math.log10(peakRate));
  const rateMax = Math.ceil(peakRate / rateScale) * rateScale;
  const rateY = (perSecond: number): number => rateBottom - (perSecond / rateMax) * rateHeight;
  const height = rateBottom + 76;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${height}" viewBox="0 0 ${layout.width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12" fill="${colors.text}">`,
    `<rect width="${layout.width}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="28" font-size="18" font-weight="600">${escapeXml(title)}</text>`,
    `<text x="16" y="48" fill="${colors.muted}">${escapeXml(subtitle)}</text>`,
  ];
  // Worker bands behind both panels, labelled at the top.
  let start = 0;
  let band = 0;
  for (const [index, sample] of samples.entries()) {
    const next = samples[index + 1];
    if (next && next.workers === sample.workers) continue;
    const from = x(start);
    const to = x(sample.second);
    parts.push(
      `<rect x="${from.toFixed(1)}" y="${layout.waitTop}" width="${(to - from).toFixed(1)}" height="${(rateBottom - layout.waitTop).toFixed(1)}" fill="${colors.bands[band % 2]}"/>`,
      `<text x="${((from + to) / 2).toFixed(1)}" y="${layout.waitTop - 8}" text-anchor="middle" fill="${colors.muted}">${sample.workers} worker${sample.workers === 1 ? '' : 's'}</text>`,
    );
    start = sample.second;
    band += 1;
  }
  // Wait panel: title, legend, log grid.
  parts.push(
    `<text x="${layout.left}" y="76" font-weight="600">Wait time per second: lockkit.lock.wait.duration (ms, log scale)</text>`,
  );
  let legendX = layout.left + plotWidth - 190;
  for (const [label, color] of [
    ['p50', colors.p50],
    ['p90', colors.p90],
    ['p99', colors.p99],
  ] as const) {
    parts.push(
      `<line x1="${legendX}" y1="72" x2="${legendX + 18}" y2="72" stroke="${color}" stroke-width="3"/>`,
      `<text x="${legendX + 24}" y="76">${label}</text>`,
    );
    legendX += 64;
  }
  for (let decade = low; decade <= high; decade++) {
    const y = waitY(10 ** decade).toFixed(1);
    const label = decade < 0 ? (10 ** decade).toFixed(-decade) : String(10 ** decade);
    parts.push(
      `<line x1="${layout.left}" y1="${y}" x2="${layout.left + plotWidth}" y2="${y}" stroke="${colors.grid}"/>`,
      `<text x="${layout.left - 8}" y="${Number(y) + 4}" text-anchor="end" fill="${colors.muted}" font-size="11">${label}</text>`,
    );
  }
  for (const key of ['p50', 'p90', 'p99'] as const) {
    const points = samples.map((sample) => [x(sample.second - 0.5), waitY(sample[key])] as const);
    parts.push(...polylines(points, colors[key]));
  }
  // Rate panel.
  parts.push(
    `<text x="${layout.left}" y="${rateTop - 12}" font-weight="600">Acquires per second: lockkit.lock.acquires by outcome</text>`,
    `<line x1="${layout.left + plotWidth - 190}" y1="${rateTop - 16}" x2="${layout.left + plotWidth - 172}" y2="${rateTop - 16}" stroke="${colors.granted}" stroke-width="3"/>`,
    `<text x="${layout.left + plotWidth - 166}" y="${rateTop - 12}">granted</text>`,
    `<line x1="${layout.left + plotWidth - 94}" y1="${rateTop - 16}" x2="${layout.left + plotWidth - 76}" y2="${rateTop - 16}" stroke="${colors.timedOut}" stroke-width="3"/>`,
    `<text x="${layout.left + plotWidth - 70}" y="${rateTop - 12}">timeout</text>`,
  );
  for (const fraction of [0, 0.5, 1]) {
    const y = rateY(rateMax * fraction).toFixed(1);
    parts.push(
      `<line x1="${layout.left}" y1="${y}" x2="${layout.left + plotWidth}" y2="${y}" stroke="${colors.grid}"/>`,
      `<text x="${layout.left - 8}" y="${Number(y) + 4}" text-anchor="end" fill="${colors.muted}" font-size="11">${Math.round(rateMax * fraction)}</text>`,
    );
  }
  for (const [key, color] of [
    ['granted', colors.granted],
    ['timedOut', colors.timedOut],
  ] as const) {
    const points = samples.map((sample) => [x(sample.second - 0.5), rateY(sample[key])] as const);
    parts.push(...polylines(points, color));
  }
  // Time axis.
  for (let second = 0; second <= seconds; second += 5) {
    parts.push(
      `<text x="${x(second).toFixed(1)}" y="${rateBottom + 18}" text-anchor="middle" fill="${colors.muted}" font-size="11">${second}</text>`,
    );
  }
  parts.push(
    `<text x="${layout.left + plotWidth / 2}" y="${rateBottom + 36}" text-anchor="middle" fill="${colors.muted}" font-size="11">seconds</text>`,
    `<text x="16" y="${height - 24}" fill="${colors.muted}" font-size="11">${escapeXml('Each point is one 1 s collection of the real OpenTelemetry SDK (cumulative, like a Prometheus scrape): percentiles estimated')}</text>`,
    `<text x="16" y="${height - 10}" fill="${colors.muted}" font-size="11">${escapeXml('from the histogram buckets the way histogram_quantile() does, so they move in bucket steps; rates are the counter’s increase.')}</text>`,
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}
