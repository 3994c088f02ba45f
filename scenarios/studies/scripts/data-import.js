// A data import on the library platform: each iteration produces RECORDS records per tenant
// to Kafka through the import service and waits until the import service has written them all
// to PostgreSQL. The Trend import_duration is the time from the first record sent to the last
// one stored (a workflow time, not a request latency).
//
// Environment: BASE_URL (gateway), TENANTS (diku,east,west), RECORDS per tenant (25000),
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

const importDuration = new Trend('import_duration', true);

export default function () {
  if (ONCE && exec.vu.iterationInScenario > 0) {
    sleep(5); // this VU's import is done: idle
    return;
  }
  const run = `k6-${exec.vu.idInTest}-${exec.vu.iterationInScenario}-${Date.now()}`;
  const start = Date.now();
  const produced = http.batch(TENANTS.map((t) => ['POST', `${BASE_URL}/import/produce?n=${RECORDS}&run=${run}`, null,
    { headers: { 'X-Tenant': t }, tags: { name: 'produce records' }, timeout: '300s' }]));
  if (!check(produced, { produced: (rs) => rs.every((r) => r.status === 202) })) {
    return;
  }
  for (const t of TENANTS) {
    for (;;) {
      const res = http.get(`${BASE_URL}/import/count?run=${run}`, { headers: { 'X-Tenant': t }, tags: { name: 'import count' } });
      if (res.status === 200 && res.json('records') >= RECORDS) {
        break;
      }
      if (Date.now() - start > TIMEOUT * 1000) {
        check(res, { 'imported in time': () => false });
        return;
      }
      sleep(1);
    }
  }
  importDuration.add(Date.now() - start);
}
