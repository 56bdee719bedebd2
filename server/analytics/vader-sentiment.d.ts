// Types for the parts of vader-sentiment (which ships none) that sentiment.ts uses.
declare module 'vader-sentiment' {
  const vader: { SentimentIntensityAnalyzer: unknown };
  export default vader;
}
