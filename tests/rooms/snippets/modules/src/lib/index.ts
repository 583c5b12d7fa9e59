export { total } from "./math";
