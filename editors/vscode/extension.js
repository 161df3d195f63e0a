// The Prism extension's client: starts `prism lsp` (the language server in
// crates/prism_lsp) over stdio for `.prism` files, and restarts it when the settings
// change. Plain JavaScript, so the extension needs no build step.
'use strict';

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

/** @type {LanguageClient | undefined} */
let client;

/** The client for the current settings. */
function makeClient() {
  const config = vscode.workspace.getConfiguration('prism');
  const serverOptions = { command: config.get('path') || 'prism', args: ['lsp'] };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'prism' },
      { scheme: 'untitled', language: 'prism' },
    ],
    // The server reads `include` and `arch` from here (crates/prism_lsp/src/server.rs).
    initializationOptions: { include: config.get('include') || [], arch: config.get('arch') || 'sm_90a' },
    // A module changed on disk changes the programs that import it.
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher('**/*.prism') },
  };
  return new LanguageClient('prism', 'Prism', serverOptions, clientOptions);
}

async function activate(context) {
  client = makeClient();
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (!e.affectsConfiguration('prism')) return;
      if (client) await client.stop();
      client = makeClient();
      await client.start();
    }),
  );
  await client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
