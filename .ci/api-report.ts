// The public API as reviewed report files (api/*.api.md), one per package entry, written by API Extractor
// from the built declarations. A new, changed or removed export changes a report: CI fails until the change
// is reviewed and the report updated.
// Usage: npm run build && node --import tsx .ci/api-report.ts [--update]
//   without --update: exit 1 and name each entry whose API differs from its report
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const update = process.argv.includes('--update');

/** Package subpath → its built declaration entry; the report is named after the subpath. */
function entries(): Array<{ subpath: string; dts: string }> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types?: string }> };
  const out: Array<{ subpath: string; dts: string }> = [];
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (target.types === undefined) continue;
    if (subpath.includes('*')) {
      const [before, after] = target.types.split('*') as [string, string];
      for (const name of readdirSync(join(root, 'plugins'))) out.push({ subpath: subpath.replace('*', name), dts: join(root, before + name + after) });
    } else out.push({ subpath, dts: join(root, target.types) });
  }
  return out;
}

const temp = mkdtempSync(join(tmpdir(), 'api-report-'));
mkdirSync(join(root, 'api'), { recursive: true });
let differs = 0;
let failed = 0;
try {
  const all = entries();
  let compilerState: CompilerState | undefined;
  for (const { subpath, dts } of all) {
    const name = `tollgate${subpath === '.' ? '' : `-${subpath.slice(2).replaceAll('/', '-')}`}`;
    const configObject: IConfigFile = {
      projectFolder: root,
      mainEntryPointFilePath: dts,
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'], strict: true, skipLibCheck: true, experimentalDecorators: true },
          files: all.map((e) => e.dts),
        },
      },
      apiReport: { enabled: true, reportFileName: `${name}.api.md`, reportFolder: join(root, 'api'), reportTempFolder: temp },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // Types reached through a signature but exported by another entry are reported in that entry's file.
        extractorMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      },
    };
    const config = ExtractorConfig.prepare({ configObject, configObjectFullPath: undefined, packageJsonFullPath: join(root, 'package.json') });
    // One compiler analysis of every entry serves all the reports.
    compilerState ??= CompilerState.create(config, { additionalEntryPoints: all.map((e) => e.dts) });
    const result = Extractor.invoke(config, { localBuild: update, compilerState, showVerboseMessages: false, messageCallback: (m) => { if (m.logLevel === ExtractorLogLevel.Info) m.handled = true; } });
    if (!result.succeeded && !result.apiReportChanged) {
      failed += 1;
      console.log(`api report: ${subpath}: ${result.errorCount} error(s)`);
    }
    if (result.apiReportChanged && !update) {
      differs += 1;
      console.log(`api report: ${subpath} differs from api/${name}.api.md (run \`npm run api:update\` and review the diff)`);
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
if (failed > 0) console.log(`api reports: ${failed} entr${failed === 1 ? 'y' : 'ies'} could not be analysed`);
else console.log(differs === 0 ? (update ? 'api reports written' : 'api reports: every entry matches its report') : `api reports: ${differs} entr${differs === 1 ? 'y differs' : 'ies differ'}`);
process.exitCode = differs === 0 && failed === 0 ? 0 : 1;
