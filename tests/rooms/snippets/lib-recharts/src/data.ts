export const EXPENSES = [
  { month: "Jan", food: 320, travel: 120 },
  { month: "Feb", food: 290, travel: 60 },
  { month: "Mar", food: 350, travel: 480 },
  { month: "Apr", food: 310, travel: 90 },
  { month: "May", food: 330, travel: 210 },
  { month: "Jun", food: 360, travel: 640 },
];
