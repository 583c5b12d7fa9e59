export const label = "badge: ";
