// The wire's scalar types: what an area, a price and a budget are made of (binding 0.1).

export type Country = "SK" | "CZ";
export type Currency = "EUR" | "CZK";
export type Category = "vehicles" | "property";
