/**
 * The lake browser's calls to icebook's server extension (<base_url>icebook/lake/...). Requests go
 * through ServerConnection, which adds the server's token and XSRF header.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export interface ICatalog {
  name: string;
  type?: string;
  uri?: string;
  warehouse?: string;
  error?: string;
}

export interface IDebt {
  kind: string;
  title: string;
  procedure: string | null;
  icebook: string | null;
}

export interface ICard {
  identifier: string;
  metadata_location: string;
  location: string;
  format_version: number;
  current_snapshot_id: string | null;
  current_snapshot_time: string | null;
  snapshots: number;
  refs: number;
  records: number | null;
  data_files: number | null;
  delete_files: number | null;
  bytes: number | null;
}

export interface ITableRow {
  identifier: string;
  /** What a notebook opens: the name, or the location of a table of a Spark session's catalog. */
  open: string;
  name: string;
  badge: 'ok' | 'debt' | 'error';
  error: string | null;
  /** Live bytes (data and delete files in main's current snapshot, from its summary), as digits: exact. */
  bytes: string | null;
  /** Why the live bytes are unknown (a table that cannot be read says so in `error` instead). */
  bytes_error: string | null;
  card: ICard | null;
  debts: IDebt[];
}

export interface INamespaces {
  namespaces?: string[];
  error?: string;
}

export interface ITablePage {
  total?: number;
  offset?: number;
  tables?: ITableRow[];
  error?: string;
}

export interface IDeepHealth {
  identifier: string;
  badge?: 'ok' | 'debt';
  debts?: IDebt[];
  summary?: string;
  error?: string;
}

export interface ILocated {
  path?: string;
  metadata_location?: string;
  name?: string;
  error?: string;
}

export async function lakeRequest<T>(endpoint: string, query: Record<string, string | number>): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const params: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    params[key] = String(value);
  }
  const url = URLExt.join(settings.baseUrl, 'icebook', 'lake', endpoint) + URLExt.objectToQueryString(params);
  const response = await ServerConnection.makeRequest(url, {}, settings);
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`icebook server extension: ${response.status} ${response.statusText}: ${text.slice(0, 200)}`);
  }
  return JSON.parse(text) as T;
}
