// A data import on the library platform: each iteration produces RECORDS records per tenant
// to Kafka through the import service and waits until the import service has written them all
// to PostgreSQL. The Trend import_duration is the time from the first record sent to the last
// one stored (a workflow time, not a request latency).
//
// MODE=update makes it an update import: the script's setup() first imports RECORDS records per
// tenant under fixed keys, and every iteration then sends new versions of those same records
// (each overwrites its row) instead of new ones (MODE=create, the default).
//
// Environment: BASE_URL (gateway), TENANTS (diku,east,west), RECORDS per tenant (25000), MODE,
// TIMEOUT seconds to wait for one import (600), ONCE (false): true runs one import per VU, as the
// report's jobs (the VU then idles until the scenario ends; give the scenario a duration longer
// than the import).
import http from 'k6/http';
import exec from 'k6/execution';
import { check, sleep } from 'k6';
import { Trend } from 'k6/metrics';

const BASE_URL = (__ENV.BASE_URL || 'http://gateway.perfexp-platform.svc:8080').replace(/\/+$/, '');
const TENANTS = (__ENV.TENANTS || 'diku,east,west').split(',');
const RECORDS = parseInt(__ENV.RECORDS || '25000', 10);
const TIMEOUT = parseInt(__ENV.TIMEOUT || '600', 10);
const ONCE = (__ENV.ONCE || 'false') === 'true';
const MODE = __ENV.MODE || 'create';

// importRun produces RECORDS records per tenant marked run (under the keys of keys, when set) and
// waits until every tenant holds them all; false when it gave up.
function importRun(run, keys) {
  const start = Date.now();
  const k = keys ? `&keys=${keys}` : '';
  const produced = http.batch(TENANTS.map((t) => ['POST', `${BASE_URL}/import/produce?n=${RECORDS}&run=${run}${k}`, null,
    { headers: { 'X-Tenant': t }, tags: { name: 'produce records' }, timeout: '300s' }]));
  if (!check(produced, { produced: (rs) => rs.every((r) => r.status === 202) })) {
    return false;
  }
  for (const t of TENANTS) {
    for (;;) {
      const res = http.get(`${BASE_URL}/import/count?run=${run}`, { headers: { 'X-Tenant': t }, tags: { name: 'import count' } });
      if (res.status === 200 && res.json('records') >= RECORDS) {
        break;
      }
      if (Date.now() - start > TIMEOUT * 1000) {
        check(res, { 'imported in time': () => false });
        return false;
      }
      sleep(1);
    }
  }
  return true;
}

// An update import's setup() imports the records first; k6's default setupTimeout (60 s) could
// end it under load before 25,000 records are stored.
export const options = { setupTimeout: `${TIMEOUT + 60}s` };

// setup imports the records an update import overwrites.
export function setup() {
  if (MODE !== 'update') {
    return { keys: '' };
  }
  const keys = `base-${Date.now()}`;
  if (!importRun(keys, '')) {
    throw new Error('the records to update were not imported');
  }
  return { keys };
}

const importDuration = new Trend('import_duration', true);

export default function (data) {
  if (ONCE && exec.vu.iterationInScenario > 0) {
    sleep(5); // this VU's import is done: idle
    return;
  }
  const run = `k6-${exec.vu.idInTest}-${exec.vu.iterationInScenario}-${Date.now()}`;
  const start = Date.now();
  if (importRun(run, data && data.keys)) {
    importDuration.add(Date.now() - start);
  }
}
