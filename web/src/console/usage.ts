/**
 * Usage: the last 30 days of calls, tokens and spend per model, as a chart (people would rather look than
 * read) and the same numbers as a table for screen readers. From GET /v1/usage?days=30, which sums the
 * principal's receipts per day and model.
 */
import { call } from '../api.js';
import { h, usd } from '../dom.js';
import type { Section } from './section.js';

/** Chart.js is loaded only when this section is shown (its own chunk), so the console's first load stays small. */
async function chartJs() {
  const { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } = await import('chart.js');
  Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);
  return Chart;
}

interface UsageDay {
  day: string;
  models: Record<string, { calls: number; tokens: number; chargedMicroUSD: number }>;
}

const PALETTE = ['#1f5fbf', '#b3541e', '#2e7d32', '#6a3fa0', '#8a6d00', '#00737a'];
type Measure = 'calls' | 'tokens' | 'chargedMicroUSD';

export const usage: Section = {
  title: 'Usage',
  async render(into) {
    const { days } = await call<{ days: UsageDay[] }>('api', 'GET', '/v1/usage?days=30');
    const models = [...new Set(days.flatMap((d) => Object.keys(d.models)))].sort();
    const canvas = h('canvas', {
      id: 'usage-chart',
      role: 'img',
      'aria-label': 'Bar chart of the last 30 days by model; the table below has the same numbers',
    });
    const picker = h(
      'select',
      { id: 'usage-measure' },
      h('option', { value: 'calls' }, 'calls'),
      h('option', { value: 'tokens' }, 'tokens'),
      h('option', { value: 'chargedMicroUSD' }, 'spend (USD)'),
    );
    const totals = (m: Measure) => models.map((model) => days.reduce((sum, d) => sum + (d.models[model]?.[m] ?? 0), 0));
    const datasets = (m: Measure) =>
      models.map((model, i) => ({
        label: model,
        data: days.map((d) => {
          const v = d.models[model]?.[m] ?? 0;
          return m === 'chargedMicroUSD' ? v / 1_000_000 : v; // display only; amounts stay integers everywhere else
        }),
        backgroundColor: PALETTE[i % PALETTE.length],
      }));
    into.append(
      h('div', { class: 'field' }, h('label', { for: 'usage-measure' }, 'Show'), picker),
      h('div', { class: 'chart' }, canvas),
      h(
        'table',
        { id: 'usage-table' },
        h('caption', {}, 'Last 30 days by model'),
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Model'),
            h('th', { scope: 'col' }, 'Calls'),
            h('th', { scope: 'col' }, 'Tokens'),
            h('th', { scope: 'col' }, 'Spend'),
          ),
        ),
        h(
          'tbody',
          {},
          ...models.map((model, i) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, model),
              h('td', {}, String(totals('calls')[i])),
              h('td', {}, String(totals('tokens')[i])),
              h('td', {}, usd(totals('chargedMicroUSD')[i]!)),
            ),
          ),
        ),
      ),
    );
    const Chart = await chartJs();
    const chart = new Chart(canvas, {
      type: 'bar',
      data: { labels: days.map((d) => d.day.slice(5)), datasets: datasets('calls') },
      options: { animation: false, responsive: true, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } },
    });
    picker.addEventListener('change', () => {
      chart.data.datasets = datasets(picker.value as Measure);
      chart.update();
    });
  },
};
