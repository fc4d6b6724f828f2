/**
 * The "Iceberg" sidebar: catalogs, then namespaces, then tables (in pages, filtered on the server),
 * each table with its card and health badge.
 *
 * Everything shown comes from catalogs and tables, which are untrusted: every string is written with
 * textContent or as an attribute value, never as HTML.
 */
import { Widget } from '@lumino/widgets';

import { ICatalog, IDebt, IDeepHealth, INamespaces, ITablePage, ITableRow, lakeRequest } from './api';

export const PAGE_SIZE = 100;

/** What the bytes beside each table are, said on hover. */
export const BYTES_MEANING =
  "live bytes: the data and delete files in main's current snapshot, as its summary totals them " +
  '(total-files-size); history, other refs, metadata and orphans are not counted (t.storage() has them all)';

export type TableSort = 'name' | 'bytes';

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = cls;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function count(n: number | null, unit: string): string {
  return n === null ? `? ${unit}` : `${n.toLocaleString('en-US')} ${unit}`;
}

function bytes(n: number | null): string {
  if (n === null || Number.isNaN(n)) {
    return '? bytes';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function debtLines(debts: IDebt[]): string {
  return debts.map(d => `${d.kind}: ${d.title}${d.procedure ? `\n  fix: ${d.procedure}` : ''}`).join('\n');
}

export interface ILakeActions {
  open(row: ITableRow): void;
  contextRow(row: ITableRow | null): void;
}

export class LakePanel extends Widget {
  private readonly list: HTMLUListElement;
  private readonly filter: HTMLInputElement;
  private readonly sortBy: HTMLSelectElement;
  private readonly expanded = new Map<string, () => Promise<void>>();
  private timer: number | undefined;

  constructor(private readonly actions: ILakeActions) {
    super();
    this.id = 'icebook-lake-browser';
    this.addClass('ib-lake');
    this.title.label = 'Iceberg';
    this.title.caption = 'Iceberg: catalogs, namespaces and tables with their health';

    const header = el('div', 'ib-lake-header');
    header.appendChild(el('span', 'ib-lake-title', 'Iceberg'));
    const refresh = el('button', 'ib-lake-refresh jp-Button', 'Refresh');
    refresh.title = 'List the catalogs again';
    refresh.addEventListener('click', () => void this.refresh());
    header.appendChild(refresh);
    this.node.appendChild(header);

    this.filter = el('input', 'ib-lake-filter jp-mod-styled');
    this.filter.type = 'search';
    this.filter.placeholder = 'Filter tables by name';
    this.filter.setAttribute('aria-label', 'Filter tables by name');
    this.filter.addEventListener('input', () => {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => void this.refilter(), 250);
    });
    this.node.appendChild(this.filter);

    const sorting = el('label', 'ib-lake-sorting', 'Sort tables by ');
    this.sortBy = el('select', 'ib-lake-sort jp-mod-styled');
    for (const [value, label] of [
      ['name', 'name'],
      ['bytes', 'bytes (largest first)']
    ]) {
      const option = el('option', '', label);
      option.value = value;
      this.sortBy.appendChild(option);
    }
    this.sortBy.title = `Bytes: ${BYTES_MEANING}. Sorting by bytes reads every table's metadata file.`;
    this.sortBy.addEventListener('change', () => void this.refilter());
    sorting.appendChild(this.sortBy);
    this.node.appendChild(sorting);

    this.list = el('ul', 'ib-lake-tree');
    this.node.appendChild(this.list);
    void this.refresh();
  }

  get filterText(): string {
    return this.filter.value.trim();
  }

  get sort(): TableSort {
    return this.sortBy.value === 'bytes' ? 'bytes' : 'name';
  }

  async refresh(): Promise<void> {
    this.expanded.clear();
    this.list.replaceChildren(el('li', 'ib-lake-loading', 'Loading catalogs…'));
    let catalogs: ICatalog[];
    try {
      catalogs = await lakeRequest<ICatalog[]>('catalogs', {});
    } catch (error) {
      this.list.replaceChildren(el('li', 'ib-lake-error', String(error)));
      return;
    }
    this.list.replaceChildren();
    if (catalogs.length === 0) {
      this.list.appendChild(
        el('li', 'ib-lake-empty', 'No catalog configured (PyIceberg: ~/.pyiceberg.yaml or PYICEBERG_CATALOG__*)')
      );
    }
    for (const catalog of catalogs) {
      this.list.appendChild(this.catalogNode(catalog));
    }
  }

  private async refilter(): Promise<void> {
    for (const reload of this.expanded.values()) {
      await reload();
    }
  }

  private toggleRow(label: string, cls: string, detail: string): [HTMLLIElement, HTMLDivElement, HTMLUListElement] {
    const item = el('li', cls);
    const row = el('div', 'ib-lake-row');
    row.appendChild(el('span', 'ib-lake-caret', '▸'));
    row.appendChild(el('span', 'ib-lake-name', label));
    if (detail) {
      row.appendChild(el('span', 'ib-lake-detail', detail));
    }
    item.appendChild(row);
    const children = el('ul', 'ib-lake-children');
    children.hidden = true;
    item.appendChild(children);
    return [item, row, children];
  }

  private catalogNode(catalog: ICatalog): HTMLLIElement {
    const [item, row, children] = this.toggleRow(catalog.name, 'ib-lake-catalog', catalog.type ?? '');
    item.dataset.catalog = catalog.name;
    row.title = [catalog.name, catalog.type, catalog.uri, catalog.warehouse].filter(Boolean).join('\n');
    if (catalog.error) {
      item.appendChild(el('div', 'ib-lake-error', catalog.error));
      return item;
    }
    let loaded = false;
    row.addEventListener('click', async () => {
      children.hidden = !children.hidden;
      item.classList.toggle('ib-open', !children.hidden);
      if (loaded || children.hidden) {
        return;
      }
      loaded = true;
      children.replaceChildren(el('li', 'ib-lake-loading', 'Listing namespaces…'));
      let answer: INamespaces;
      try {
        answer = await lakeRequest<INamespaces>('namespaces', { catalog: catalog.name });
      } catch (error) {
        answer = { error: String(error) };
      }
      children.replaceChildren();
      if (answer.error !== undefined) {
        children.appendChild(el('li', 'ib-lake-error', answer.error));
        loaded = false;
        return;
      }
      for (const namespace of answer.namespaces ?? []) {
        children.appendChild(this.namespaceNode(catalog.name, namespace));
      }
      if ((answer.namespaces ?? []).length === 0) {
        children.appendChild(el('li', 'ib-lake-empty', 'no namespaces'));
      }
    });
    return item;
  }

  private namespaceNode(catalog: string, namespace: string): HTMLLIElement {
    const [item, row, children] = this.toggleRow(namespace, 'ib-lake-namespace', '');
    item.dataset.namespace = namespace;
    const key = `${catalog}\u0000${namespace}`;
    const load = async (): Promise<void> => {
      const reading = this.sort === 'bytes' ? "Listing tables and reading each one's size…" : 'Listing tables…';
      children.replaceChildren(el('li', 'ib-lake-loading', reading));
      await this.loadPage(catalog, namespace, children, 0);
    };
    row.addEventListener('click', async () => {
      children.hidden = !children.hidden;
      item.classList.toggle('ib-open', !children.hidden);
      if (children.hidden) {
        this.expanded.delete(key);
        return;
      }
      this.expanded.set(key, load);
      await load();
    });
    return item;
  }

  private async loadPage(catalog: string, namespace: string, children: HTMLUListElement, offset: number): Promise<void> {
    const filter = this.filterText;
    const sort = this.sort;
    let page: ITablePage;
    try {
      page = await lakeRequest<ITablePage>('tables', { catalog, namespace, offset, limit: PAGE_SIZE, filter, sort });
    } catch (error) {
      page = { error: String(error) };
    }
    if (filter !== this.filterText || sort !== this.sort) {
      return; // the filter or the order changed while this page was on its way; its own request follows
    }
    children.querySelectorAll(':scope > .ib-lake-loading, :scope > .ib-lake-more').forEach(n => n.remove());
    if (page.error !== undefined) {
      children.appendChild(el('li', 'ib-lake-error', page.error));
      return;
    }
    const tables = page.tables ?? [];
    for (const table of tables) {
      children.appendChild(this.tableNode(table));
    }
    const total = page.total ?? 0;
    const shown = offset + tables.length;
    if (total === 0) {
      children.appendChild(el('li', 'ib-lake-empty', filter ? `no table matches “${filter}”` : 'no tables'));
    } else if (shown < total) {
      const more = el('li', 'ib-lake-more');
      const button = el('button', 'jp-Button ib-lake-more-button', `Show more (${shown} of ${total})`);
      button.addEventListener('click', () => {
        button.disabled = true;
        button.textContent = 'Loading…';
        void this.loadPage(catalog, namespace, children, shown);
      });
      more.appendChild(button);
      children.appendChild(more);
    }
  }

  private tableNode(table: ITableRow): HTMLLIElement {
    const item = el('li', 'ib-lake-table');
    item.dataset.identifier = table.identifier;
    item.tabIndex = 0;
    const row = el('div', 'ib-lake-row');
    row.appendChild(el('span', 'ib-lake-name', table.name));
    const size = el('span', 'ib-lake-bytes', bytes(table.bytes === null ? null : Number(table.bytes)));
    size.dataset.bytes = table.bytes ?? '';
    size.title = table.bytes === null ? BYTES_MEANING : `${table.bytes} bytes: ${BYTES_MEANING}`;
    row.appendChild(size);
    const badge = el('span', `ib-lake-badge ib-badge-${table.badge}`, table.badge);
    row.appendChild(badge);
    item.appendChild(row);
    if (table.bytes_error) {
      item.appendChild(el('div', 'ib-lake-error ib-lake-bytes-error', table.bytes_error));
    }
    const card = table.card;
    if (card !== null) {
      const when = card.current_snapshot_time ? card.current_snapshot_time.replace('T', ' ').slice(0, 19) : 'no snapshot';
      const facts = [
        `v${card.format_version}`,
        when,
        count(card.snapshots, card.snapshots === 1 ? 'snapshot' : 'snapshots'),
        count(card.refs, card.refs === 1 ? 'ref' : 'refs'),
        count(card.records, 'records'),
        count(card.data_files, 'files')
      ];
      item.appendChild(el('div', 'ib-lake-card', facts.join(' · ')));
      item.title = `${table.identifier}\n${card.location}\ncurrent snapshot ${card.current_snapshot_id ?? 'none'}`;
    }
    const details = el('div', 'ib-lake-debts');
    item.appendChild(details);
    this.showDebts(details, badge, table.badge, table.debts, table.error, false);
    badge.title = 'Click for the full health check (reads manifests, lists the location)';
    badge.addEventListener('click', event => {
      event.stopPropagation();
      void this.deepHealth(table, details, badge);
    });
    item.addEventListener('dblclick', () => this.actions.open(table));
    item.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        this.actions.open(table);
      }
    });
    item.addEventListener('contextmenu', () => this.actions.contextRow(table));
    return item;
  }

  private showDebts(
    details: HTMLDivElement,
    badge: HTMLSpanElement,
    state: string,
    debts: IDebt[],
    error: string | null,
    deep: boolean
  ): void {
    badge.className = `ib-lake-badge ib-badge-${state}`;
    badge.textContent = deep ? `${state} ✓` : state;
    details.replaceChildren();
    if (error) {
      details.appendChild(el('div', 'ib-lake-error', error));
    }
    for (const debt of debts) {
      const line = el('div', 'ib-lake-debt');
      line.dataset.kind = debt.kind;
      line.appendChild(el('span', 'ib-lake-debt-kind', debt.kind));
      line.appendChild(el('span', 'ib-lake-debt-title', debt.title));
      line.title = debtLines([debt]);
      details.appendChild(line);
    }
  }

  async deepHealth(table: ITableRow, details?: HTMLDivElement, badge?: HTMLSpanElement): Promise<void> {
    const item = this.findTable(table.identifier);
    details = details ?? (item?.querySelector('.ib-lake-debts') as HTMLDivElement | undefined);
    badge = badge ?? (item?.querySelector('.ib-lake-badge') as HTMLSpanElement | undefined);
    if (!details || !badge) {
      return;
    }
    badge.textContent = 'checking…';
    let answer: IDeepHealth;
    try {
      answer = await lakeRequest<IDeepHealth>('health', { table: table.open });
    } catch (error) {
      answer = { identifier: table.identifier, error: String(error) };
    }
    if (answer.error !== undefined) {
      this.showDebts(details, badge, 'error', [], answer.error, true);
    } else {
      this.showDebts(details, badge, answer.badge ?? 'ok', answer.debts ?? [], null, true);
    }
  }

  private findTable(identifier: string): HTMLElement | undefined {
    for (const node of Array.from(this.node.querySelectorAll<HTMLElement>('.ib-lake-table'))) {
      if (node.dataset.identifier === identifier) {
        return node;
      }
    }
    return undefined;
  }
}
