/**
 * Opening a table in the workbench: a new notebook from the template below, or the active notebook,
 * with `%ice open NAME --as NAME` and the view asked for already run.
 *
 * The table's name is untrusted: it is written on the `%ice` line in shell quotes (the magic splits
 * its line like a shell and does no variable expansion), and the Python variable is a sanitised
 * identifier, never the raw name.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

export type View = 'explore' | 'health' | 'history' | 'tree';

/** `'...'` quoting as a POSIX shell (and Python's shlex) reads it. */
export function shellQuote(text: string): string {
  return "'" + text.split("'").join("'\"'\"'") + "'";
}

/** A Python identifier for the table's variable, from its last name part. */
export function variableName(identifier: string): string {
  const last = identifier.split(/[./]/).filter(p => p.length > 0).pop() ?? '';
  let name = last.replace(/[^A-Za-z0-9_]/g, '_').replace(/^_+/, '');
  if (!/^[A-Za-z]/.test(name)) {
    name = 't_' + name;
  }
  return name.slice(0, 40) || 't';
}

/** Why a name cannot be written on one `%ice` line, or null when it can. */
export function unsafeForMagic(identifier: string): string | null {
  if (/[\r\n]/.test(identifier)) {
    return 'it contains a line break';
  }
  if (identifier.includes('{{')) {
    return "it contains '{{', which %ice reads as a notebook variable";
  }
  return null;
}

/** The template's cells: load icebook, open the table under a variable, show the view. */
export function templateCells(identifier: string, view: View): string[] {
  const name = variableName(identifier);
  const open = `${name} = %ice open ${shellQuote(identifier)} --as ${name}`;
  const show = view === 'explore' ? `${name}.explore()` : `%ice ${view} --table ${name}`;
  return ['%load_ext icebook', open, show];
}

async function run(panel: NotebookPanel, first: number, count: number): Promise<void> {
  const notebook = panel.content;
  await panel.sessionContext.ready;
  notebook.activeCellIndex = first;
  notebook.deselectAll();
  notebook.extendContiguousSelectionTo(first + count - 1);
  await NotebookActions.run(notebook, panel.sessionContext);
}

export async function openInNewNotebook(
  app: JupyterFrontEnd,
  cwd: string,
  identifier: string,
  view: View
): Promise<NotebookPanel> {
  const panel = (await app.commands.execute('notebook:create-new', {
    cwd,
    kernelName: 'python3'
  })) as NotebookPanel;
  await panel.context.ready;
  const shared = panel.content.model!.sharedModel;
  const cells = templateCells(identifier, view);
  shared.transact(() => {
    shared.deleteCellRange(0, shared.cells.length);
    shared.insertCells(
      0,
      cells.map(source => ({ cell_type: 'code', source }))
    );
  });
  await run(panel, 0, cells.length);
  return panel;
}

export async function openInActiveNotebook(
  tracker: INotebookTracker,
  identifier: string,
  view: View
): Promise<NotebookPanel | null> {
  const panel = tracker.currentWidget;
  if (panel === null) {
    return null;
  }
  await panel.context.ready;
  const shared = panel.content.model!.sharedModel;
  const cells = templateCells(identifier, view);
  const first = shared.cells.length;
  shared.insertCells(
    first,
    cells.map(source => ({ cell_type: 'code', source }))
  );
  await run(panel, first, cells.length);
  return panel;
}
