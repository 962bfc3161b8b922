// Chart.js (loaded from chart.umd.js, shipped with the package) behind three small helpers; each canvas
// keeps one chart, updated in place when the data changes.
const charts = new Map();
const COLORS = ['#2f6fde', '#e8833a', '#1b7f3b', '#c62828', '#7b52ab', '#00838f', '#8d6e63', '#5b6475'];

function draw(canvasId, config) {
  const existing = charts.get(canvasId);
  if (existing !== undefined) {
    existing.data = config.data;
    existing.update();
    return;
  }
  const canvas = document.getElementById(canvasId);
  charts.set(canvasId, new window.Chart(canvas, { ...config, options: { responsive: true, maintainAspectRatio: false, animation: false, ...config.options } }));
}

/** A bar chart of calls and credits (two axes) per label. */
export function callsAndCredits(canvasId, labels, calls, credits) {
  draw(canvasId, {
    type: 'bar',
    data: { labels, datasets: [
      { label: 'Calls', data: calls, backgroundColor: COLORS[0], yAxisID: 'calls' },
      { label: 'Credits', data: credits, backgroundColor: COLORS[1], yAxisID: 'credits' },
    ] },
    options: { scales: { calls: { position: 'left', beginAtZero: true }, credits: { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false } } } },
  });
}

/** A line of one series over labels (days). */
export function series(canvasId, labels, label, values) {
  draw(canvasId, { type: 'line', data: { labels, datasets: [{ label, data: values, borderColor: COLORS[0], backgroundColor: COLORS[0], tension: 0.2 }] }, options: { scales: { y: { beginAtZero: true } } } });
}

/** A doughnut of parts (used against remaining, calls per status). */
export function parts(canvasId, labels, values) {
  draw(canvasId, { type: 'doughnut', data: { labels, datasets: [{ data: values, backgroundColor: labels.map((_, i) => COLORS[i % COLORS.length]) }] }, options: { plugins: { legend: { position: 'right' } } } });
}
