// The edge patron API as a discovery layer calls it: read a patron's account with loans, holds
// and charges, and place a hold on an instance. Edge APIs take an API key instead of a login.
//
// Environment:
//   BASE_URL    edge-patron's URL, e.g. http://edge-patron.folio.svc:8081 (required)
//   API_KEY     the edge API key (from a Secret)
//   PATRON_IDS  comma-separated external system ids of patrons (required)
//   INSTANCE_IDS comma-separated instance ids to place holds on (required)
//   PICKUP_LOCATION_ID the service point for holds (required)
//   HOLD_SHARE  the share of iterations that also place a hold, 0..1 (default 0.1)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, fail } from 'k6';

const BASE_URL = (__ENV.BASE_URL || '').replace(/\/+$/, '');
const PATRONS = (__ENV.PATRON_IDS || '').split(',').filter(Boolean);
const INSTANCES = (__ENV.INSTANCE_IDS || '').split(',').filter(Boolean);
const HOLD_SHARE = parseFloat(__ENV.HOLD_SHARE || '0.1');

export const options = {
  thresholds: {
    'http_req_duration{name:patron account}': ['p(95)<1000'],
  },
};

export function setup() {
  if (!BASE_URL || !__ENV.API_KEY || PATRONS.length === 0 || INSTANCES.length === 0 || !__ENV.PICKUP_LOCATION_ID) {
    fail('BASE_URL, API_KEY, PATRON_IDS, INSTANCE_IDS and PICKUP_LOCATION_ID are required');
  }
}

export default function () {
  const n = exec.scenario.iterationInTest;
  const patron = PATRONS[n % PATRONS.length];
  const key = encodeURIComponent(__ENV.API_KEY);
  const account = http.get(
    `${BASE_URL}/patron/account/${patron}?includeLoans=true&includeHolds=true&includeCharges=true&apikey=${key}`,
    { tags: { name: 'patron account' } });
  check(account, { 'account 200': (r) => r.status === 200 });
  // A fixed share of iterations, spread evenly, places a hold.
  if (Math.floor((n + 1) * HOLD_SHARE) > Math.floor(n * HOLD_SHARE)) {
    const instance = INSTANCES[n % INSTANCES.length];
    const hold = http.post(`${BASE_URL}/patron/account/${patron}/instance/${instance}/hold?apikey=${key}`,
      JSON.stringify({ requestDate: new Date().toISOString(), pickupLocationId: __ENV.PICKUP_LOCATION_ID }),
      { headers: { 'Content-Type': 'application/json' }, tags: { name: 'place hold' } });
    // 422: the patron already holds this instance, which the API reports and the run allows.
    check(hold, { 'hold placed': (r) => r.status === 201 || r.status === 422 });
  }
}
