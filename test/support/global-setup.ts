// Placeholder until the warehouse lands: integration tests read DATABASE_URL.
export default function setup() {}
