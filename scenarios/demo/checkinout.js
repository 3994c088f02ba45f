// Check-out followed by check-in of one library item per iteration, against the demo's
// circulation service (test/demoapp). The load shape (VUs, duration, stages, rate) comes from
// the PerfExperiment or the k6 command line, not from this script.
//
// Each step is a k6 group, so perfexp reports it as a transaction ("check-out", "check-in":
// count, avg, p50, p75, p95 in the report's Transactions table), and the custom Trend
// checkout_transaction times the successful check-outs only (the report's Custom metrics).
//
// Environment:
//   BASE_URL      circulation's base URL (default http://circulation.perfexp-demo.svc:8080)
//   ITEMS_PER_VU  distinct items each VU cycles through (default 50)
//   THINK_TIME    seconds to pause after each iteration (default 0)
import http from 'k6/http';
import exec from 'k6/execution';
import { check, group, sleep } from 'k6';
import { Trend } from 'k6/metrics';

const BASE_URL = (__ENV.BASE_URL || 'http://circulation.perfexp-demo.svc:8080').replace(/\/+$/, '');
const ITEMS_PER_VU = parseInt(__ENV.ITEMS_PER_VU || '50', 10);
const THINK_TIME = parseFloat(__ENV.THINK_TIME || '0');

// Init code runs once per VU: a random prefix keeps the items of different VUs, and of VUs in
// different k6 pods of a distributed run, apart, so no two VUs ever fight over one item.
const VU_PREFIX = Math.random().toString(36).slice(2, 10);
const USER = `patron-${VU_PREFIX}`;

// A time Trend (true): k6 writes it in seconds as k6_checkout_transaction_seconds, perfexp
// reports it in milliseconds.
const checkoutTransaction = new Trend('checkout_transaction', true);

function post(path, body, name) {
  return http.post(`${BASE_URL}${path}`, JSON.stringify(body), {
    headers: { 'Content-Type': 'application/json' },
    // The request name is what perfexp reports per request ("check-out", "check-in").
    tags: { name },
  });
}

export default function () {
  const item = `item-${VU_PREFIX}-${exec.vu.iterationInScenario % ITEMS_PER_VU}`;
  const out = group('check-out', () => {
    const res = post('/circulation/check-out-by-barcode', { itemBarcode: item, userBarcode: USER }, 'check-out');
    if (check(res, { 'check-out 201': (r) => r.status === 201 })) {
      checkoutTransaction.add(res.timings.duration);
    }
    return res;
  });
  // Checked in even when the check-out failed, so a failure never leaves the item stuck.
  group('check-in', () => {
    const back = post('/circulation/check-in-by-barcode', { itemBarcode: item }, 'check-in');
    check(back, { 'check-in 200': (r) => r.status === 200 || (out.status !== 201 && r.status === 409) });
  });
  if (THINK_TIME > 0) {
    sleep(THINK_TIME);
  }
}
