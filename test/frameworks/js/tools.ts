import { ORDER_ERROR_MESSAGE, ORDER_ERROR_TYPE, WEATHER_TEXT } from '../stand-in-model.ts';

/**
 * The scenario's two tools as plain functions; each framework wraps them its own way
 * (Mastra `createTool`, LangChain `tool`, AI SDK `tool`). `lookup_order` always throws a
 * distinctive error, so the failed step can be told from any other text in the trajectory.
 */
export class OrderServiceUnavailable extends Error {
  override readonly name = ORDER_ERROR_TYPE;
}

export function getWeather(_input: { city: string }): string {
  return WEATHER_TEXT;
}

export function lookupOrder(_input: { order_id: string }): never {
  throw new OrderServiceUnavailable(ORDER_ERROR_MESSAGE);
}

export const WEATHER_DESCRIPTION = 'Current weather for a city';
export const ORDER_DESCRIPTION = 'Look up an order by its id';
