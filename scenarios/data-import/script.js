// Creates an inventory instance and then updates it, one record per iteration, the two halves
// of a data import of new and changed records. Run at an arrival rate, so the number of records
// is rate x duration (5k, 25k or 100k in the reference runs) whatever the response times.
//
// Environment:
//   BASE_URL          API gateway (required)
//   TENANT            tenant id (default diku)
//   USERNAME/PASSWORD a user allowed to create and edit instances (from a Secret)
//   INSTANCE_TYPE_ID  the instance type of created records (required)
//   SOURCE            the records' source (default perfexp-import)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, fail } from 'k6';

const BASE_URL = (__ENV.BASE_URL || '').replace(/\/+$/, '');
const TENANT = __ENV.TENANT || 'diku';
const SOURCE = __ENV.SOURCE || 'perfexp-import';
// A run id keeps the records of repeated runs apart.
const RUN = `${Date.now().toString(36)}`;

export const options = {
  thresholds: {
    'http_req_failed{name:create instance}': ['rate<0.01'],
  },
};

export function setup() {
  if (!BASE_URL || !__ENV.INSTANCE_TYPE_ID) {
    fail('BASE_URL and INSTANCE_TYPE_ID are required');
  }
  const res = http.post(`${BASE_URL}/authn/login`, JSON.stringify({ username: __ENV.USERNAME, password: __ENV.PASSWORD }), {
    headers: { 'Content-Type': 'application/json', 'X-Okapi-Tenant': TENANT },
    tags: { name: 'login' },
  });
  if (res.status !== 201 && res.status !== 200) {
    fail(`login failed: ${res.status}`);
  }
  return { token: res.headers['X-Okapi-Token'] || res.json('okapiToken') };
}

export default function (data) {
  const headers = { 'Content-Type': 'application/json', 'X-Okapi-Tenant': TENANT, 'X-Okapi-Token': data.token };
  const n = exec.scenario.iterationInTest;
  const record = {
    title: `perfexp import ${RUN} record ${n}`,
    source: SOURCE,
    instanceTypeId: __ENV.INSTANCE_TYPE_ID,
    identifiers: [],
  };
  const created = http.post(`${BASE_URL}/inventory/instances`, JSON.stringify(record), { headers, tags: { name: 'create instance' } });
  if (!check(created, { 'create 201': (r) => r.status === 201 })) {
    return;
  }
  const id = (created.headers.Location || '').split('/').pop() || created.json('id');
  record.id = id;
  record.title = `${record.title} (updated)`;
  const updated = http.put(`${BASE_URL}/inventory/instances/${id}`, JSON.stringify(record), { headers, tags: { name: 'update instance' } });
  check(updated, { 'update 204': (r) => r.status === 204 });
}
