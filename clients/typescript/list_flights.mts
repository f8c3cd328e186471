// A multi-term, filtered, paged list of the demo's flights, and facet counts, through openapi-fetch, typed by the
// paths openapi-typescript generated from the demo's document (./schema.d.ts, written by
// tests/clients/test_generated_client.py). Prints the answer as JSON: node list_flights.mjs <base URL>.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

declare const process: { argv: string[] }; // Node's, without @types/node

// openapi-fetch's default serialization: order_by repeated, the filter objects as "deepObject"
// (filters[origin]=JFK), which the server reads as the filters themselves.
const client = createClient<paths>({ baseUrl: process.argv[2] });

const { data, error, response } = await client.GET("/api/v1/flights", {
  params: {
    query: {
      filters: { origin: "JFK", dep_delay__gte: 300, carrier__in: "AA,UA,DL,B6,VX" },
      dest_airport_filters: { dest_airport__tzone: "America/Los_Angeles" },
      order_by: ["-dep_delay", "id"],
      count: 5,
      page: 2,
    },
  },
});
// The facet counts beside that list (docs: facets): the facets as a repeated parameter, the filters as above.
const facets = await client.GET("/api/v1/flights/facets", {
  params: {
    query: {
      facet: ["carrier", "origin"],
      facet_limit: 3,
      filters: { origin: "JFK", dest: "LAX" },
    },
  },
});
console.log(
  JSON.stringify({
    status: response.status,
    url: response.url,
    ids: data?.data.map((flight) => flight.id) ?? null,
    total: data?.pagination.total ?? null,
    error: error ?? null,
    facets: {
      status: facets.response.status,
      url: facets.response.url,
      counts: facets.data?.data.map((entry) => [entry.facet, entry.values.map((one) => [one.value, one.count])]) ?? null,
      total: facets.data?.total ?? null,
    },
  }),
);
