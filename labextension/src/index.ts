/**
 * icebook's lake browser: the "Iceberg" sidebar, its commands and context menus, and "Open with
 * icebook" in the file browser. Nothing here writes to a catalog or a table.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Clipboard, Notification } from '@jupyterlab/apputils';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { INotebookTracker } from '@jupyterlab/notebook';

import { ILocated, ITableRow, lakeRequest } from './api';
import { openInActiveNotebook, openInNewNotebook, unsafeForMagic, View } from './notebook';
import { LakePanel } from './panel';

const PLUGIN_ID = 'icebook-lake-browser:plugin';

namespace CommandIDs {
  export const open = 'icebook:lake-open';
  export const openActive = 'icebook:lake-open-active';
  export const copyName = 'icebook:lake-copy-name';
  export const copyLocation = 'icebook:lake-copy-location';
  export const health = 'icebook:lake-health';
  export const deepHealth = 'icebook:lake-deep-health';
  export const history = 'icebook:lake-history';
  export const tree = 'icebook:lake-tree';
  export const refresh = 'icebook:lake-refresh';
  export const openPath = 'icebook:open-path';
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'An Iceberg sidebar: catalogs, namespaces and tables with their health',
  autoStart: true,
  optional: [INotebookTracker, IDefaultFileBrowser],
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker | null, browser: IDefaultFileBrowser | null) => {
    let selected: ITableRow | null = null;

    const cwd = (): string => browser?.model.path ?? '';

    const openTable = async (identifier: string, view: View, active: boolean): Promise<void> => {
      const why = unsafeForMagic(identifier);
      if (why !== null) {
        Notification.error(`icebook cannot open this table from the panel: ${why}`);
        return;
      }
      try {
        if (active && tracker !== null && tracker.currentWidget !== null) {
          await openInActiveNotebook(tracker, identifier, view);
        } else {
          await openInNewNotebook(app, cwd(), identifier, view);
        }
      } catch (error) {
        Notification.error(`icebook: could not open ${identifier}: ${String(error)}`);
      }
    };

    const panel = new LakePanel({
      open: row => {
        if (row.card !== null) {
          void openTable(row.open, 'explore', false);
        }
      },
      contextRow: row => {
        selected = row;
      }
    });
    app.shell.add(panel, 'left', { rank: 600 });

    const hasTable = (): boolean => selected !== null && selected.card !== null;
    app.commands.addCommand(CommandIDs.open, {
      label: 'Open in a new notebook',
      isEnabled: hasTable,
      execute: () => openTable(selected!.open, 'explore', false)
    });
    app.commands.addCommand(CommandIDs.openActive, {
      label: 'Open in the active notebook',
      isEnabled: () => hasTable() && tracker !== null && tracker.currentWidget !== null,
      execute: () => openTable(selected!.open, 'explore', true)
    });
    app.commands.addCommand(CommandIDs.copyName, {
      label: 'Copy name',
      isEnabled: () => selected !== null,
      execute: () => Clipboard.copyToSystem(selected!.identifier)
    });
    app.commands.addCommand(CommandIDs.copyLocation, {
      label: 'Copy location',
      isEnabled: hasTable,
      execute: () => Clipboard.copyToSystem(selected!.card!.location)
    });
    const views: [string, View, string][] = [
      [CommandIDs.health, 'health', 'Open health'],
      [CommandIDs.history, 'history', 'Open history'],
      [CommandIDs.tree, 'tree', 'Open metadata tree']
    ];
    for (const [id, view, label] of views) {
      app.commands.addCommand(id, {
        label,
        isEnabled: hasTable,
        execute: () => openTable(selected!.open, view, false)
      });
    }
    app.commands.addCommand(CommandIDs.deepHealth, {
      label: 'Check health now (reads manifests, lists files)',
      isEnabled: hasTable,
      execute: () => panel.deepHealth(selected!)
    });
    app.commands.addCommand(CommandIDs.refresh, {
      label: 'Refresh the Iceberg panel',
      execute: () => panel.refresh()
    });

    const tableMenu = [
      CommandIDs.open,
      CommandIDs.openActive,
      CommandIDs.copyName,
      CommandIDs.copyLocation,
      CommandIDs.deepHealth,
      CommandIDs.health,
      CommandIDs.history,
      CommandIDs.tree
    ];
    tableMenu.forEach((command, rank) =>
      app.contextMenu.addItem({ command, selector: '.ib-lake-table', rank: rank + 1 })
    );

    // "Open with icebook" on a table directory or a metadata file in the file browser.
    const selectedPath = (): string | null => {
      const item = browser?.selectedItems().next();
      return item && !item.done ? item.value.path : null;
    };
    app.commands.addCommand(CommandIDs.openPath, {
      label: 'Open with icebook',
      isVisible: () => {
        const item = browser?.selectedItems().next();
        if (!item || item.done) {
          return false;
        }
        const name = item.value.name;
        return item.value.type === 'directory' || /\.metadata\.json(\.gz)?$/.test(name) || /\.gz\.metadata\.json$/.test(name);
      },
      execute: async () => {
        const path = selectedPath();
        if (path === null) {
          return;
        }
        let located: ILocated;
        try {
          located = await lakeRequest<ILocated>('locate', { path });
        } catch (error) {
          located = { error: String(error) };
        }
        if (located.error !== undefined || located.path === undefined) {
          Notification.error(`Open with icebook: ${located.error ?? 'no table here'}`);
          return;
        }
        await openTable(located.path, 'explore', false);
      }
    });
    app.contextMenu.addItem({ command: CommandIDs.openPath, selector: '.jp-DirListing-item[data-isdir]', rank: 3 });
  }
};

export default plugin;
